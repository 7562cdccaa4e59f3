import pytest

from projects.services import project_create


@pytest.fixture
def garden(alice):
    return project_create(
        user=alice,
        name="Garden",
        description="The vegetable garden.",
        instructions="Always give quantities in metric units.",
    )
