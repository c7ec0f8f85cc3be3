"""allocation.py: the collector paused for a block, and the peak memory benchmarks print."""

import gc
import subprocess
import sys

import pytest

from polygraph_logic.allocation import collector_paused, peak_rss_mb


def test_the_collector_is_paused_and_restored_whatever_happens():
    assert gc.isenabled()
    with pytest.raises(ValueError):
        with collector_paused():
            assert not gc.isenabled()
            raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # restored as it was: off
    finally:
        gc.enable()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's")
def test_a_child_s_peak_is_its_own_not_its_parent_s():
    """A child started by a parent holding 400 MiB reports its own peak (``ru_maxrss``, carried
    across fork and exec, reports at least the parent's)."""
    held = bytearray(400 * 2**20)
    held[::4096] = b"\x01" * len(held[::4096])  # touched: resident
    code = ("import resource; from polygraph_logic.allocation import peak_rss_mb; "
            "print(peak_rss_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    own, carried = map(float, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                             check=True).stdout.split())
    assert peak_rss_mb() >= 400
    assert own < 200 <= 400 <= carried
    del held
