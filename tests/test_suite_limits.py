"""The suite's own rules: a test past its time limit fails with one line naming it, no stack dumps."""

from pathlib import Path

pytest_plugins = ["pytester"]


def test_a_test_past_its_limit_fails_with_one_line_naming_it(pytester):
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile(test_slow="import time\n\ndef test_sleeps():\n    time.sleep(30)\n\ndef test_quick():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--timeout", "1", "-q")
    result.assert_outcomes(failed=1, passed=1)
    out = result.stdout.str()
    assert "test_slow.py::test_sleeps ran past its 1 s limit" in out
    assert "Timeout" not in out.replace("ran past", "") and "File " not in out and "Thread" not in out, out
