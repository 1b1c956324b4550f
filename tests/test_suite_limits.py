"""The suite's own rules: a test past its time limit fails with one line naming it, no stack dumps."""

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


def test_a_test_past_its_limit_fails_with_one_line_naming_it(pytester, monkeypatch):
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile(test_slow="import time\n\ndef test_sleeps():\n    time.sleep(30)\n\ndef test_quick():\n    pass\n")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only pytest-timeout: a quicker start
    result = pytester.runpytest_subprocess("-p", "pytest_timeout", "-p", "no:cacheprovider", "--timeout", "1", "-q")
    result.assert_outcomes(failed=1, passed=1)
    out = result.stdout.str()
    assert "test_slow.py::test_sleeps ran past its 1 s limit" in out
    assert "Timeout" not in out.replace("ran past", "") and "File " not in out and "Thread" not in out, out


@pytest.mark.slow(seconds=3)
def test_tests_sharing_a_group_run_on_one_worker(pytester, monkeypatch):
    """`make test` keeps a module's expensive fixture to one worker with xdist groups: a pytest that
    silently ignores them plays each famine match and program run once per worker."""
    pytester.makepyfile(test_grouped="import pytest\n\npytestmark = pytest.mark.xdist_group('g')\n\n"
                        + "".join(f"def test_{i}():\n    pass\n\n" for i in range(6)))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only xdist: quicker workers
    result = pytester.runpytest_subprocess("-p", "xdist", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup", "-v")
    result.assert_outcomes(passed=6)
    workers = {line.split()[0] for line in result.stdout.lines if "PASSED" in line}
    assert len(workers) == 1 and all(line.rstrip().endswith("@g") for line in result.stdout.lines if "PASSED" in line), result.stdout.str()
