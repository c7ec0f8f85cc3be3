"""One local[2] Spark session for the whole test run (the JVM starts once), or a skip saying why."""

import pytest


@pytest.fixture(scope="session")
def spark():
    from polygraph_logic.engines.spark import spark_available, spark_session
    problem = spark_available()
    if problem:
        pytest.skip(problem)
    return spark_session("local[2]")
