import pytest

from projects.services import project_create
from tests.chat.conftest import fake_llm  # noqa: F401  (the chat tests' model server)


@pytest.fixture
def garden(alice):
    return project_create(
        user=alice,
        name="Garden",
        description="The vegetable garden.",
        instructions="Always give quantities in metric units.",
    )
