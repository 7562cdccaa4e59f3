from tests.memory.conftest import fake_llm  # noqa: F401  (the memory tests' model server)
