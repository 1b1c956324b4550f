import pytest

from wildhold.content import default_content


@pytest.fixture(scope="session")
def content():
    return default_content()
