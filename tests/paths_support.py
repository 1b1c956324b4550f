"""Where the suite's files are, for tests at any depth of the mirrored tree."""
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
