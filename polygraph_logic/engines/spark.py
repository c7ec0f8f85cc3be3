"""A Spark session for the tables engines: local mode by default, quiet, started once per process.

pyspark is an optional dependency (``pip install "polygraph_logic[spark]"``); it needs a
Java runtime (17 works).  Starting a JVM takes seconds, so one session per master is kept
and reused (tests, benchmarks and repeated queries pay the start-up once).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from polygraph_logic.errors import PolygraphError

#: shuffle partitions for local mode: Spark's default of 200 tasks per shuffle costs more
#: than the joins of a what-if on two cores
LOCAL_PARTITIONS = 4
#: the heap of a local session (driver and executors are one JVM): Spark's 1 GB default ran out
#: building a broadcast for a what-if on the x40 tables (2.3 M mention rows)
LOCAL_MEMORY = os.environ.get("POLYGRAPH_SPARK_MEMORY", "4g")


def spark_available() -> str | None:
    """Returns None when pyspark can be imported, else why not (a line for a skip or an error)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return 'pyspark is not installed: pip install "polygraph_logic[spark]"'
    if not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
        return "Spark needs a Java runtime (17 or later): no java on PATH and JAVA_HOME is unset"
    return None


# the JVM's log from its first line (setLogLevel comes after start-up warnings): the root at warn,
# which Spark takes as the shell level it would otherwise announce on stderr, and the loggers
# that warn on every start (no native Hadoop library, the host name) at error
_LOG4J = """rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
logger.utils.name = org.apache.spark.util.Utils
logger.utils.level = error
"""


def _log_configuration() -> Path:
    path = Path(tempfile.gettempdir()) / f"polygraph-spark-log4j2-{os.getuid() if hasattr(os, 'getuid') else 0}.properties"
    if not path.is_file() or path.read_text() != _LOG4J:
        path.write_text(_LOG4J)
    return path


@lru_cache(maxsize=None)
def spark_session(master: str = "local[2]"):
    """Returns the process's Spark session for ``master`` (``local[N]`` or ``spark://HOST:PORT``)."""
    problem = spark_available()
    if problem:
        raise PolygraphError("missing_dependency", problem)
    from pyspark.sql import SparkSession
    builder = (SparkSession.builder.master(master).appName("polygraph")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{_log_configuration()}"))
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no warning about the loopback host name
        builder = (builder.config("spark.driver.memory", LOCAL_MEMORY)
                   .config("spark.sql.shuffle.partitions", str(LOCAL_PARTITIONS))
                   .config("spark.default.parallelism", str(LOCAL_PARTITIONS))
                   .config("spark.driver.host", "127.0.0.1")
                   .config("spark.driver.bindAddress", "127.0.0.1"))
    try:
        session = builder.getOrCreate()
    except Exception as error:  # no Java, a port in use, an unreachable master: one line, not a trace
        raise PolygraphError("spark_error", f"cannot start Spark ({master}): "
                                            f"{str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__}") from None
    session.sparkContext.setLogLevel("ERROR")
    return session
