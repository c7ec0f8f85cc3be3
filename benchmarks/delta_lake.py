"""Benchmark: a graph folder's versions as today's layout against a Delta Lake table of the same facts, in one run.

A trial for the folder's versions on a real table format (issue 51): the ``deltalake`` package
(delta-rs, no JVM) against today's layout (versions/N folders of Parquet files beside the
build's, renamed into place: graph/store/folder_versions.py).  A synthetic graph is generated
(``--copies`` copies), its last ``--batch`` assertions held out, the rest built as a graph folder
by DuckDB without receipts; then, for the same fact rows, side by side:

  - today's layout: ``polygraph add`` of the held-out batch to a copy (whole process), the
    bytes its version adds (all of versions/2, and its facts and retired files), a version
    folder of the same fact rows written as ``add`` writes one (in process), and the fact table
    read through DuckDB at the latest version and at ``--at 1``;
  - Delta Lake: the build's facts written as a Delta table (its version 0 is the folder's
    version 1), then the rows the add changed committed as one Delta commit, three ways: a
    MERGE by fact number into the one file the table was written as, the same MERGE into a
    table written in files of ``--file-kib`` KiB (copy on write rewrites only the files
    holding changed rows), and a blind append of the changed rows with a ``since`` column (what
    today's layout does, the reader keeping the latest row of each number); the commit's time
    and the bytes it adds; the table read at its latest version and at version 0 (time travel)
    through deltalake's own engine into DuckDB over Arrow (no pyarrow), through
    ``to_pyarrow_dataset`` into DuckDB (when pyarrow is installed), through DuckDB's
    ``read_parquet`` over the snapshot's file list, and through DuckDB's ``delta_scan`` when
    its delta extension is installed (never downloaded here: autoinstall is off);
  - crashes: ``--kills`` child processes killed with SIGKILL at a random moment of a Delta
    MERGE commit, and as many ``polygraph add`` processes on today's layout; after each, the
    table must read as before or as after, whole; leftovers are counted;
  - concurrent writers: two child processes committing against the same version at once
    (MERGE and MERGE, append and append, each with Delta's default retries and with
    ``max_commit_retries=0``): who wins, what the loser is told, what the table holds; and two
    ``polygraph add`` processes at once on today's layout, against the two in turn;
  - ``--spark``: what plain Spark (no Delta jars) reads of the Delta folder.

Every read is checked: the Delta table at each version against the folder at the matching one
(count and a hash of every column of every row).  Times are printed, never asserted.

    python -m benchmarks.delta_lake [--copies 10] [--batch 50] [--repeat 3] [--kills 20] [--races 3]
                                    [--file-kib 256] [--spark] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Polygraph, median, module, print_table, timings

#: the columns of a folder's facts table (folder_layout.py)
COLUMNS = ("num", "relation", "args", "label", "exact", "sets")
#: a fingerprint of a fact table: rows, and a hash of every column of every row (order-free)
DIGEST = ("SELECT count(*), coalesce(sum(hash(num, relation, args, label, exact, sets)::HUGEINT), 0) "
          "FROM {source}")
#: how today's layout writes every Parquet file (folder_layout.PARQUET), and Delta's equivalent
ZSTD1 = dict(compression="ZSTD", compression_level=1)
#: the three ways of committing the changed rows to a Delta table
VARIANTS = ("merge, one file", "merge, small files", "append + since")


def quoted(path) -> str:
    return str(path).replace("'", "''")


def duck():
    import duckdb
    con = duckdb.connect()
    con.execute("SET autoinstall_known_extensions = false")  # never download an extension here
    return con


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def has_pyarrow() -> bool:
    try:
        import pyarrow.dataset  # noqa: F401
    except ImportError:
        return False
    return True


# --- today's layout ----------------------------------------------------------------------------

def folder_source(con, folder: Path, at: int | None) -> str:
    """The FROM text of the folder's facts at version ``at`` (the latest when None), as its readers build it."""
    from polygraph_logic.graph.store.folder_versions import VersionedTables, check_version
    return VersionedTables(con, folder, check_version(folder, at)).table("facts")


def folder_digest(folder: Path, at: int | None = None) -> tuple:
    con = duck()
    try:
        return tuple(con.execute(DIGEST.format(source=folder_source(con, folder, at))).fetchone())
    finally:
        con.close()


def folder_version(folder: Path) -> int:
    from polygraph_logic.graph.store.folder_versions import latest_version
    return latest_version(folder)


def write_version_folder(folder: Path, changed: Path, retired: Path, version: int) -> None:
    """Writes the changed fact rows as ``add`` writes a version folder (folder_version_write.finish):
    a hidden folder, facts sorted by number and retired.parquet in zstd level 1, version.json,
    renamed into place."""
    from polygraph_logic.graph.store.folder_layout import PARQUET
    root = folder / "versions"
    root.mkdir(exist_ok=True)
    partial = root / f".{version}.partial-{os.getpid()}"
    partial.mkdir()
    con = duck()
    try:
        con.execute(f"COPY (SELECT * FROM read_parquet('{quoted(changed)}') ORDER BY num) "
                    f"TO '{quoted(partial / 'facts.parquet')}' ({PARQUET})")
        con.execute(f"COPY (SELECT * FROM read_parquet('{quoted(retired)}') WHERE tbl = 'facts' ORDER BY tbl, num) "
                    f"TO '{quoted(partial / 'retired.parquet')}' ({PARQUET})")
        (partial / "version.json").write_text(json.dumps({"version": version}), encoding="utf-8")
        partial.rename(root / str(version))
    finally:
        con.close()


# --- Delta Lake ---------------------------------------------------------------------------------

def writer_properties():
    from deltalake import WriterProperties
    return WriterProperties(**ZSTD1)


def delta_base(folder: Path, target: Path, variant: str, file_kib: int) -> None:
    """Writes the build's facts (the folder's version 1) as a Delta table (its version 0)."""
    from deltalake import write_deltalake
    con = duck()
    try:
        since = ", 1::INTEGER AS since" if variant == "append + since" else ""
        rows = con.sql(f"SELECT *{since} FROM read_parquet('{quoted(folder / 'facts.parquet')}')")
        size = dict(target_file_size=file_kib * 1024) if variant == "merge, small files" else {}
        write_deltalake(str(target), rows, writer_properties=writer_properties(), **size)
    finally:
        con.close()


def changed_rows(changed: Path, retired: Path, variant: str):
    """The rows an add changed, as an Arrow table (arro3): for a MERGE, with ``gone_`` true for a
    fact retired and not written again (none for an add; an applied deletion has them)."""
    from arro3.core import Table
    con = duck()
    try:
        if variant == "append + since":
            sql = f"SELECT *, 2::INTEGER AS since FROM read_parquet('{quoted(changed)}')"
        else:
            sql = (f"SELECT *, false AS gone_ FROM read_parquet('{quoted(changed)}') UNION ALL "
                   f"SELECT num, NULL, NULL, NULL, NULL, NULL, true FROM read_parquet('{quoted(retired)}') "
                   f"WHERE tbl = 'facts' AND num NOT IN (SELECT num FROM read_parquet('{quoted(changed)}'))")
        return Table.from_arrow(con.sql(sql))
    finally:
        con.close()


def delta_commit(table, rows, variant: str, retries: int | None = None) -> dict:
    """Commits the changed rows as one Delta commit against ``table`` (a path, or a DeltaTable
    opened at the version the rows were computed against); returns a MERGE's metrics."""
    from deltalake import CommitProperties, DeltaTable, write_deltalake
    commit = CommitProperties(max_commit_retries=retries) if retries is not None else None
    table = table if isinstance(table, DeltaTable) else DeltaTable(str(table))
    if variant == "append + since":
        write_deltalake(table, rows, mode="append", writer_properties=writer_properties(),
                        commit_properties=commit)
        return {}
    values = {c: f"s.{c}" for c in COLUMNS}
    return (table
            .merge(rows, predicate="t.num = s.num", source_alias="s", target_alias="t",
                   writer_properties=writer_properties(), commit_properties=commit)
            .when_matched_delete(predicate="s.gone_")
            .when_matched_update(updates=values, predicate="NOT s.gone_")
            .when_not_matched_insert(updates=values, predicate="NOT s.gone_")
            .execute())


def latest_rows(source: str, variant: str) -> str:
    """The FROM text of the current facts of a Delta table read as ``source``."""
    if variant != "append + since":
        return source
    return (f"(SELECT * EXCLUDE (since) FROM {source} "
            "QUALIFY row_number() OVER (PARTITION BY num ORDER BY since DESC) = 1)")


def delta_read(table: Path, version: int | None, variant: str, how: str) -> tuple:
    """Opens the Delta table at ``version`` (the latest when None) and returns its facts' DIGEST,
    read ``how``: 'deltalake' (its DataFusion engine, an Arrow stream into DuckDB), 'pyarrow'
    (to_pyarrow_dataset into DuckDB), 'files' (DuckDB's read_parquet over the snapshot's files)
    or 'delta_scan' (DuckDB's delta extension)."""
    from deltalake import DeltaTable, QueryBuilder
    con = duck()
    try:
        if how == "delta_scan":
            con.execute("LOAD delta")
            source = f"delta_scan('{quoted(table)}')" if version is None else \
                f"delta_scan('{quoted(table)}', version => {version})"
        else:
            dt = DeltaTable(str(table), version=version)
            if how == "deltalake":
                stream = QueryBuilder().register("facts", dt).execute("SELECT * FROM facts")  # noqa: F841
                source = "stream"
            elif how == "pyarrow":
                dataset = dt.to_pyarrow_dataset()  # noqa: F841
                source = "dataset"
            else:  # the snapshot's files, as its log lists them (no deletion vectors in these tables)
                files = ", ".join(f"'{quoted(f)}'" for f in dt.file_uris())
                source = f"read_parquet([{files}])"
        return tuple(con.execute(DIGEST.format(source=latest_rows(source, variant))).fetchone())
    finally:
        con.close()


def delta_extension() -> tuple[bool, str]:
    """Whether DuckDB's delta extension can be loaded here without a download, and why not."""
    con = duck()
    try:
        found = con.execute("SELECT installed, install_path FROM duckdb_extensions() "
                            "WHERE extension_name = 'delta'").fetchone()
        if not found or not found[0]:
            import duckdb
            return False, (f"not installed for DuckDB {duckdb.__version__} (INSTALL delta downloads it from "
                           "DuckDB's extension repository, not a package registry; the package index's "
                           "duckdb-ext-delta wheels were built for DuckDB 1.2 to 1.4 on 2026-12-06, and "
                           "DuckDB 2 refuses to load 1.4's)")
        con.execute("LOAD delta")
        return True, f"installed at {found[1]}"
    except Exception as error:  # noqa: BLE001 - the reason is what is reported
        return False, f"cannot load: {str(error).splitlines()[0]}"
    finally:
        con.close()


# --- child processes ---------------------------------------------------------------------------

def child(argv: list[str]) -> int:
    """``--child TABLE CHANGED RETIRED VARIANT RETRIES GO``: reads the rows, opens the table (its
    latest version), says ``ready``, waits for the file GO (when not '-'), commits against the
    version it opened, and prints the outcome as JSON."""
    table, changed, retired, variant, retries, go = argv
    rows = changed_rows(Path(changed), Path(retired), variant)
    from deltalake import DeltaTable
    opened = DeltaTable(table)  # the version its rows are computed against (and the kill lands in the commit)
    print("ready", flush=True)
    if go != "-":
        while not os.path.exists(go):
            time.sleep(0.0005)
    started = time.perf_counter()
    try:
        delta_commit(opened, rows, variant, None if retries == "-" else int(retries))
        outcome = {"ok": True}
    except Exception as error:  # noqa: BLE001 - the loser's error is what is measured
        import deltalake.exceptions
        where = "deltalake.exceptions" if isinstance(error, deltalake.exceptions.DeltaError) else type(error).__module__
        outcome = {"ok": False, "error": f"{where}.{type(error).__name__}",
                   "message": " ".join(str(error).split())[:300]}
    outcome["seconds"] = time.perf_counter() - started
    print(json.dumps(outcome), flush=True)
    return 0


def start_child(table: Path, changed: Path, retired: Path, variant: str, retries: int | None = None,
                go: Path | None = None) -> subprocess.Popen:
    process = subprocess.Popen(module("delta_lake", "--child", table, changed, retired, variant,
                                      "-" if retries is None else retries, go or "-"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    line = process.stdout.readline().strip()
    if line != "ready":
        process.kill()
        raise RuntimeError(f"the committing child did not start: {line} {process.stderr.read()[-500:]}")
    return process


def finish_child(process: subprocess.Popen) -> dict:
    out, err = process.communicate(timeout=300)
    lines = out.strip().splitlines()
    if process.returncode != 0 or not lines:
        return {"ok": False, "error": f"exit {process.returncode}", "message": err.strip()[-300:]}
    return json.loads(lines[-1])


# --- the measurements ---------------------------------------------------------------------------

def prepare(work: Path, copies: int, batch: int, polygraph: Polygraph) -> dict:
    """Generates the graph, splits off the batch (and its halves, for two adds at once), builds the
    base folder and the grown ones; returns the paths."""
    gen = work / "gen"
    polygraph("generate", "-o", gen, "--copies", copies).check("generate")
    lines = (gen / "assertions.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    files = {"base": lines[:-batch], "batch": lines[-batch:], "half_a": lines[-batch:-batch // 2],
             "half_b": lines[-batch // 2:]}
    paths = {name: work / f"{name}.jsonl" for name in files}
    for name, chunk in files.items():
        paths[name].write_text("".join(chunk), encoding="utf-8")
    base = work / "base.tables"
    built = polygraph("build", "--assertions", paths["base"], "--rules", "ro", "--engine", "duckdb",
                      "--tables", base).check("build")
    print(f"graph: --copies {copies}, {len(lines):,} assertions, {batch} held out; base folder built by DuckDB "
          f"in {built.seconds:.1f} s, {tree_bytes(base) / 2**20:.1f} MiB")
    # the changes of each batch computed against version 1, by add itself
    for name in ("batch", "half_a", "half_b"):
        grown = work / f"{name}.tables"
        shutil.copytree(base, grown)
        polygraph("add", grown, "--assertions", paths[name]).check(f"add {name}")
        paths[f"{name}_changed"] = grown / "versions" / "2" / "facts.parquet"
        paths[f"{name}_retired"] = grown / "versions" / "2" / "retired.parquet"
        paths[f"{name}_tables"] = grown
    paths["base_tables"] = base
    return paths


def measure_today(work: Path, paths: dict, repeat: int, polygraph: Polygraph) -> dict:
    base, grown = paths["base_tables"], paths["batch_tables"]
    runs = []
    for _ in range(repeat):
        copy = work / "today.tables"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(base, copy)
        runs.append(polygraph("add", copy, "--assertions", paths["batch"]).check("add"))
    version = grown / "versions" / "2"
    con = duck()
    changed_count = con.execute(f"SELECT count(*) FROM read_parquet('{quoted(paths['batch_changed'])}')").fetchone()[0]
    retired_count = con.execute(f"SELECT count(*) FROM read_parquet('{quoted(paths['batch_retired'])}') "
                                "WHERE tbl = 'facts'").fetchone()[0]
    con.close()
    writes = []
    for _ in range(repeat):
        copy = work / "write.tables"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(base, copy)
        seconds, _ = timings(lambda: write_version_folder(copy, paths["batch_changed"], paths["batch_retired"], 2))
        writes.append(seconds[0])
    facts_bytes = sum((version / f).stat().st_size for f in ("facts.parquet", "retired.parquet"))
    written = work / "write.tables" / "versions" / "2"
    reads = {at: timings(lambda at=at: folder_digest(grown, at), repeat)[0] for at in (None, 1)}
    return {"add": runs, "changed": changed_count, "retired": retired_count, "version_bytes": tree_bytes(version),
            "facts_bytes": facts_bytes, "write": writes, "write_bytes": tree_bytes(written), "reads": reads,
            "digests": {1: folder_digest(grown, 1), 2: folder_digest(grown)}}


def measure_delta(work: Path, paths: dict, variant: str, repeat: int, file_kib: int, readers: list[str]) -> dict:
    from deltalake import DeltaTable
    pristine = work / f"delta-{VARIANTS.index(variant)}-base"
    shutil.rmtree(pristine, ignore_errors=True)
    [base_seconds], _ = timings(lambda: delta_base(paths["base_tables"], pristine, variant, file_kib))
    rows = changed_rows(paths["batch_changed"], paths["batch_retired"], variant)
    table = work / f"delta-{VARIANTS.index(variant)}"
    commits, metrics = [], {}
    for _ in range(repeat):
        shutil.rmtree(table, ignore_errors=True)
        shutil.copytree(pristine, table)
        [seconds], metrics = timings(lambda: delta_commit(table, rows, variant))
        commits.append(seconds)
    dt = DeltaTable(str(table))
    reads = {}
    for how in readers:
        for version in (None, 0):
            reads[(how, version)] = timings(lambda: delta_read(table, version, variant, how), repeat)
    return {"base_seconds": base_seconds, "base_bytes": tree_bytes(pristine), "files": len(DeltaTable(str(pristine))
            .file_uris()), "commit": commits, "added": tree_bytes(table) - tree_bytes(pristine),
            "version": dt.version(), "metrics": metrics or {}, "reads": reads, "table": table, "pristine": pristine}


def delta_kills(work: Path, paths: dict, pristine: Path, kills: int, digests: dict, rng: random.Random) -> dict:
    """Kills a MERGE commit at random moments; each time the table must read as before or after."""
    from deltalake import DeltaTable
    table = work / "delta-kill"
    variant = "merge, one file"
    # one commit to its end: how long a child's commit takes, to spread the kills over it
    shutil.rmtree(table, ignore_errors=True)
    shutil.copytree(pristine, table)
    calibration = finish_child(start_child(table, paths["batch_changed"], paths["batch_retired"], variant))
    span = calibration["seconds"]
    outcomes = {"before": 0, "after": 0, "bad": 0, "orphan files": 0, "log leftovers": 0}
    bad = []
    for _ in range(kills):
        shutil.rmtree(table, ignore_errors=True)
        shutil.copytree(pristine, table)
        process = start_child(table, paths["batch_changed"], paths["batch_retired"], variant)
        time.sleep(rng.uniform(0, span * 1.1))
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        try:
            dt = DeltaTable(str(table))
            version, digest = dt.version(), delta_read(table, None, variant, "deltalake")
            state = {(0, digests[1]): "before", (1, digests[2]): "after"}.get((version, digest), "bad")
            listed = {Path(f).name for f in dt.file_uris()} | {Path(f).name for f in DeltaTable(str(table), version=0)
                                                               .file_uris()}
        except Exception as error:  # noqa: BLE001 - an unreadable table is the finding
            state, listed = "bad", set()
            bad.append(f"{type(error).__name__}: {str(error).splitlines()[0][:200]}")
        outcomes[state] += 1
        outcomes["orphan files"] += sum(1 for p in table.glob("*.parquet") if p.name not in listed)
        outcomes["log leftovers"] += sum(1 for p in (table / "_delta_log").iterdir()
                                         if not p.name.endswith(".json") or p.name.startswith((".", "_")))
    # after a kill, the next writer commits as usual
    after = finish_child(start_child(table, paths["batch_changed"], paths["batch_retired"], variant))
    return {"span": span, "outcomes": outcomes, "bad": bad, "next": after, "version": DeltaTable(str(table)).version()}


def today_kills(work: Path, paths: dict, kills: int, span: float, digests: dict, rng: random.Random) -> dict:
    """Kills ``polygraph add`` at random moments; each time the folder must read as before or after."""
    copy = work / "kill.tables"
    outcomes = {"before": 0, "after": 0, "bad": 0, "leftovers": 0}
    bad = []
    command = [sys.executable, "-P", "-m", "polygraph_logic.cli", "add", str(copy), "--assertions",
               str(paths["batch"])]
    for _ in range(kills):
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(paths["base_tables"], copy)
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True)
        time.sleep(rng.uniform(0, span * 1.05))
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        try:
            version, digest = folder_version(copy), folder_digest(copy)
            state = {(1, digests[1]): "before", (2, digests[2]): "after"}.get((version, digest), "bad")
        except Exception as error:  # noqa: BLE001
            state = "bad"
            bad.append(f"{type(error).__name__}: {str(error).splitlines()[0][:200]}")
        outcomes[state] += 1
        versions = copy / "versions"
        outcomes["leftovers"] += sum(1 for p in versions.glob(".*")) if versions.is_dir() else 0
    return {"outcomes": outcomes, "bad": bad}


def delta_race(work: Path, paths: dict, pristine: Path, variant: str, retries: int | None, digests: dict) -> dict:
    """Two children commit half A's and half B's changes (both computed against version 1) at once."""
    from deltalake import DeltaTable
    table = work / "delta-race"
    shutil.rmtree(table, ignore_errors=True)
    shutil.copytree(pristine, table)
    go = work / "go"
    go.unlink(missing_ok=True)
    children = [start_child(table, paths[f"{half}_changed"], paths[f"{half}_retired"], variant, retries, go)
                for half in ("half_a", "half_b")]
    go.touch()
    results = [finish_child(c) for c in children]
    dt = DeltaTable(str(table))
    digest = delta_read(table, None, variant, "deltalake")
    state = {digests["half_a"]: "A alone", digests["half_b"]: "B alone", digests["a_then_b"]: "A then B",
             digests["b_then_a"]: "B then A", digests[1]: "unchanged"}.get(digest, "neither: both batches' rows, each computed against version 1")
    return {"results": results, "version": dt.version(), "state": state}


def today_race(work: Path, paths: dict, digests: dict) -> dict:
    copy = work / "race.tables"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(paths["base_tables"], copy)
    processes = [subprocess.Popen([sys.executable, "-P", "-m", "polygraph_logic.cli", "add", str(copy),
                                   "--assertions", str(paths[half])], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for half in ("half_a", "half_b")]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=600)
        said = (err.strip() or out.strip()).splitlines()
        results.append({"ok": process.returncode == 0, "code": process.returncode, "said": said[-1] if said else ""})
    digest = folder_digest(copy)
    state = {digests["a_then_b"]: "as A then B", digests["b_then_a"]: "as B then A", digests["half_a"]: "A alone",
             digests["half_b"]: "B alone", digests[1]: "unchanged"}.get(digest, "other")
    return {"results": results, "version": folder_version(copy), "state": state}


def spark_reads(table: Path, variant: str) -> list[str]:
    """What plain Spark (no Delta jars) makes of the Delta folder."""
    from deltalake import DeltaTable
    from pyspark.sql import SparkSession
    lines = []
    spark = (SparkSession.builder.master("local[1]").appName("delta-trial").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        try:
            spark.read.format("delta").load(str(table)).count()
            lines.append("format('delta'): read (Delta jars present)")
        except Exception as error:  # noqa: BLE001
            said = " ".join(str(error).split())
            lines.append(f"format('delta'): {said[said.find('['):][:100] if '[' in said else said[:160]}")
        naive = spark.read.parquet(str(table)).count()
        files = DeltaTable(str(table)).file_uris()
        listed = spark.read.parquet(*files).count()
        lines.append(f"parquet(the folder): {naive:,} rows (every file, the superseded ones included: wrong)")
        lines.append(f"parquet(the log's {len(files)} files): {listed:,} rows (right for tables without "
                     "deletion vectors or column mapping)")
    finally:
        spark.stop()
    return lines


def seconds_text(values: list[float]) -> str:
    return f"{median(values):.3f} s (best {min(values):.3f})"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return child(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--batch", type=int, default=50, help="assertions held out and added (default 50)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kills", type=int, default=20, help="kills of each writer (default 20)")
    parser.add_argument("--races", type=int, default=3, help="two writers at once, tries of each case (default 3)")
    parser.add_argument("--file-kib", type=int, default=256, help="Delta's target file size for 'merge, small files'")
    parser.add_argument("--seed", type=int, default=0, help="the kill moments' seed")
    parser.add_argument("--spark", action="store_true", help="also start Spark (local[1]) on the Delta folder")
    parser.add_argument("--work", type=Path, default=None, help="keep the files here (default: a temporary folder)")
    args = parser.parse_args(argv)
    import deltalake
    import duckdb
    print(f"deltalake {deltalake.__version__} (delta-rs {deltalake.rust_core_version()}), DuckDB {duckdb.__version__}, "
          f"pyarrow {'installed' if has_pyarrow() else 'not installed'}")
    with tempfile.TemporaryDirectory(prefix="delta-lake-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        polygraph = Polygraph()
        paths = prepare(work, args.copies, args.batch, polygraph)
        today = measure_today(work, paths, args.repeat, polygraph)
        digests = dict(today["digests"])
        digests["half_a"] = folder_digest(paths["half_a_tables"])
        digests["half_b"] = folder_digest(paths["half_b_tables"])
        for first, second, key in (("half_a", "half_b", "a_then_b"), ("half_b", "half_a", "b_then_a")):
            sequential = work / f"{key}.tables"
            shutil.copytree(paths[f"{first}_tables"], sequential)
            polygraph("add", sequential, "--assertions", paths[second]).check(f"add {second} after {first}")
            digests[key] = folder_digest(sequential)

        loadable, why = delta_extension()
        readers = ["deltalake", *(["pyarrow"] if has_pyarrow() else []), "files", *(["delta_scan"] if loadable else [])]
        delta = {variant: measure_delta(work, paths, variant, args.repeat, args.file_kib, readers)
                 for variant in VARIANTS}

        print(f"\nthe add: {today['changed']:,} fact rows written ({today['changed'] - today['retired']:,} new, "
              f"{today['retired']:,} with a changed label); the folder's version 1 has "
              f"{digests[1][0]:,} facts, version 2 {digests[2][0]:,}")
        print("\nwriting version 2 (the Delta table's version 1)")
        add = today["add"]
        rows = [["today: polygraph add (whole process)", seconds_text([r.seconds for r in add]),
                 f"{today['version_bytes'] / 1024:,.0f} KiB", "every table, circuit, record"],
                ["today: the version folder of these facts", seconds_text(today["write"]),
                 f"{today['write_bytes'] / 1024:,.0f} KiB", "facts + retired + record, renamed"]]
        for variant, d in delta.items():
            m = d["metrics"]
            what = (f"{d['files']} files; {m.get('num_target_files_removed', 0)} rewritten, "
                    f"{m.get('num_target_rows_copied', 0):,} rows copied") if m else f"{d['files']} files; appended"
            rows.append([f"Delta: {variant}", seconds_text(d["commit"]), f"{d['added'] / 1024:,.0f} KiB", what])
        print_table(["", "time", "bytes added", ""], rows, indent="  ")
        base_delta = delta["merge, one file"]
        print(f"  (version 1's facts: today {(paths['base_tables'] / 'facts.parquet').stat().st_size / 1024:,.0f} KiB "
              f"written by DuckDB; Delta {base_delta['base_bytes'] / 1024:,.0f} KiB written by delta-rs in "
              f"{base_delta['base_seconds']:.2f} s)")

        print("\nreading the facts (open, then count and hash every row in DuckDB), median of "
              f"{args.repeat}")
        rows = [["today: folder, DuckDB", seconds_text(today["reads"][None]), seconds_text(today["reads"][1]), "ok"]]
        mismatches = 0
        for variant, d in delta.items():
            for how in readers:
                latest, latest_digest = d["reads"][(how, None)]
                first, first_digest = d["reads"][(how, 0)]
                same = latest_digest == digests[2] and first_digest == digests[1]
                mismatches += not same
                rows.append([f"Delta ({variant}): {how}", seconds_text(latest), seconds_text(first),
                             "ok" if same else "DIFFERS"])
        print_table(["", "latest", "version 1 (--at 1 / Delta 0)", "rows"], rows, indent="  ")
        print(f"  DuckDB's delta_scan: {'measured' if loadable else 'not measured'}: {why}")
        if not has_pyarrow():
            print("  to_pyarrow_dataset: not measured (pyarrow not installed)")

        if args.kills:
            rng = random.Random(args.seed)
            print(f"\ncrashes: SIGKILL at a random moment, {args.kills} times each")
            killed = delta_kills(work, paths, delta["merge, one file"]["pristine"], args.kills, digests, rng)
            o = killed["outcomes"]
            print(f"  Delta MERGE (a child's commit takes {killed['span']:.2f} s): {o['before']} read as before, "
                  f"{o['after']} as after, {o['bad']} neither; {o['orphan files']} data files left that no "
                  f"version lists, {o['log leftovers']} leftovers in _delta_log; the next commit after the last "
                  f"kill: {'ok' if killed['next'].get('ok') else killed['next']}, table at version "
                  f"{killed['version']}")
            for line in killed["bad"][:3]:
                print(f"    {line}")
            span = median(r.seconds for r in add)
            dead = today_kills(work, paths, args.kills, span, digests, rng)
            o = dead["outcomes"]
            print(f"  today's polygraph add (whole process, {span:.2f} s): {o['before']} read as before, "
                  f"{o['after']} as after, {o['bad']} neither; {o['leftovers']} hidden partial folders left "
                  "(the next add clears them)")
            for line in dead["bad"][:3]:
                print(f"    {line}")

        if args.races:
            print(f"\ntwo writers at once: half A ({args.batch - args.batch // 2} assertions) and half B "
                  f"({args.batch // 2}), each computed against version 1; {args.races} tries of each")
            cases = [("merge, one file", None), ("merge, one file", 0), ("append + since", None),
                     ("append + since", 0)]
            for variant, retries in cases:
                pristine = delta[variant]["pristine"]
                tries = [delta_race(work, paths, pristine, variant, retries, digests) for _ in range(args.races)]
                label = f"Delta {variant.split(',')[0].split(' +')[0]}, " + \
                        ("default retries" if retries is None else "max_commit_retries=0")
                said = [f"version {t['version']}, {t['state']}; " + ", ".join(
                    "won" if r["ok"] else f"lost ({r['error']}: {r['message'][:240]})" for r in t["results"])
                    for t in tries]
                for line in dict.fromkeys(said):
                    print(f"  {label}: {said.count(line)}x {line}")
            said = []
            for _ in range(args.races):
                t = today_race(work, paths, digests)
                said.append(f"version {t['version']}, {t['state']}; " + ", ".join(
                    ("ok" if r["ok"] else f"exit {r['code']}: {r['said'][:120]}") for r in t["results"]))
            for line in dict.fromkeys(said):
                print(f"  today's two polygraph add: {said.count(line)}x {line}")

        print("\nSpark")
        if args.spark:
            for line in spark_reads(delta["merge, one file"]["table"], "merge, one file"):
                print(f"  {line}")
        else:
            print("  not started (--spark): plain Spark reads the Delta folder only as Parquet files")
        return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
