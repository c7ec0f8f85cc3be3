"""Values and the built-in functions over them, as Soufflé computes them: the value width, records and ADTs,
conversions, ``match`` patterns."""
