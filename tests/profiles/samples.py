"""Messages with a clear style, shared by the profile tests."""

CASUAL = "hey lol yeah gonna try that rn 😊👍"
FORMAL = "Dear Sir, I would appreciate your assistance regarding the report. Kind regards."
EXPERT = (
    "The `select_for_update()` call deadlocks under concurrency; the ORM migration adds an "
    "index, so is this a race condition in the transaction isolation?"
)
