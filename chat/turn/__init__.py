"""The live turn, from a user's message to its reply, split by where each part runs:

- ``drive``: the turn in order, with no websocket in it (``take_turn``, ``take_turn_again``;
  ``run_turn`` with a sink for the frames): what the consumer and any other driver call;
- ``setup``: the database steps before the model streams (the store and its checks, then the
  context), in one database thread trip;
- ``reply``: the stream on the event loop (``ReplyTask``), run by the conversation's room
  (``chat.live``), and the reply's store;
- ``after``: the work after the reply (style, memory, activity), in a database thread;
- ``gate``: the database threads each runs in, and the after-turn batching.

docs/architecture.md ("The hops of one turn") lists the steps with where each runs.
"""

from chat.turn.drive import (
    Turn,
    TurnSetUp,
    admit_model_call,
    admitted_setup,
    run_set_up_turn,
    run_turn,
    set_up_turn,
    start_turn,
    take_turn,
    take_turn_again,
)
from chat.turn.gate import in_db_thread, run_setup
from chat.turn.reply import ReplyTask, open_stream
from chat.turn.setup import (
    PreparedTurn,
    prepare_continue,
    prepare_edit,
    prepare_regenerate,
    prepare_retry,
    prepare_turn,
)

__all__ = [
    "PreparedTurn",
    "ReplyTask",
    "Turn",
    "TurnSetUp",
    "admit_model_call",
    "admitted_setup",
    "in_db_thread",
    "open_stream",
    "prepare_continue",
    "prepare_edit",
    "prepare_regenerate",
    "prepare_retry",
    "prepare_turn",
    "run_set_up_turn",
    "run_setup",
    "run_turn",
    "set_up_turn",
    "start_turn",
    "take_turn",
    "take_turn_again",
]
