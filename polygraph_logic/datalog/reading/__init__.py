"""Reading program text and fact files: the parser, the fast reader, the C preprocessor and ``.include``,
components expanded, Soufflé's ``.input`` fact files."""
