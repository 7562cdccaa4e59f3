"""bench/join.py's own measurement: how a joined tab's frames are folded and checked (as
the page folds them, docs/protocol.md), and which process holds a connection."""

import asyncio
import os
import socket

from bench.join import JoinedView, JoinSchedule, socket_inode, socket_owner

REPLY = "one two three four five"


def resume(seq, text, html="", tail="", reply_id=7):
    return {"type": "resume", "id": reply_id, "seq": seq, "text": text, "html": html, "tail": tail}


def chunk(seq, text, html="", tail="", reply_id=7):
    return {"type": "chunk", "id": reply_id, "seq": seq, "text": text, "html": html, "tail": tail}


def snapshot(seq, text, reply_id=7):
    return {"type": "snapshot", "id": reply_id, "seq": seq, "text": text, "html": f"<p>{text}</p>"}


def end(html, status="complete", reply_id=7):
    return {"type": "reply_end", "id": reply_id, "status": status, "html": html}


def fold(*frames) -> tuple[JoinedView, list[bool]]:
    view = JoinedView(7)
    return view, [view.take(frame) for frame in frames]


def test_resume_then_the_next_chunks_show_the_whole_reply():
    view, firsts = fold(
        {"type": "ready", "streaming": 7},
        resume(2, "one two", tail="<p>one two</p>"),
        chunk(3, " three", tail="<p>one two three</p>"),
        chunk(4, " four five", html="<p>one two three four five</p>", tail=""),
        end("<p>one two three four five</p>"),
    )
    assert firsts == [False, True, False, False, False]  # the resume is the first frame timed
    assert view.text == REPLY
    assert view.check(REPLY) == []


def test_a_missing_chunk_is_a_gap():
    view, _ = fold(resume(2, "one two"), chunk(4, " four five"), end(""))
    assert any("gap" in p for p in view.check(REPLY))


def test_a_chunk_the_resume_already_had_is_skipped_as_the_page_does():
    view, _ = fold(resume(3, "one two three"), chunk(3, " three"), chunk(4, " four five"), end(""))
    assert view.skipped == 1
    assert view.text == REPLY


def test_text_doubled_by_the_server_does_not_pass():
    view, _ = fold(resume(2, "one two three"), chunk(3, " three"), chunk(4, " four five"), end(""))
    assert any("words" in p for p in view.check(REPLY))


def test_html_that_differs_from_the_final_render_does_not_pass():
    view, _ = fold(resume(1, "one", tail="<p>one</p>"), chunk(2, " two three four five"), end("x"))
    assert view.check(REPLY) == ["the chunks' HTML differs from reply_end's"]


def test_another_process_resume_then_snapshots_an_older_one_skipped():
    view, firsts = fold(
        resume(2, "one two"),
        snapshot(4, "one two three four"),
        snapshot(3, "one two three"),
        end("<p>one two three four five</p>"),
    )
    assert firsts == [True, False, False, False]
    assert view.text == "one two three four"
    assert view.check(REPLY) == []


def test_a_snapshot_that_rewrites_the_text_does_not_pass():
    view, _ = fold(resume(2, "one two"), snapshot(3, "one too three"), end(""))
    assert any("does not extend" in p for p in view.check(REPLY))


def test_no_resume_and_no_end_do_not_pass():
    view, _ = fold(chunk(1, "one"))
    problems = view.check(REPLY)
    assert "no reply_end" in problems and "no resume" in problems


def test_frames_of_another_reply_are_ignored():
    view, firsts = fold(resume(1, "other", reply_id=8), resume(1, "one"))
    assert firsts == [False, True]
    assert view.text == "one"


TABLE = """  sl local_address rem_address st tx_queue rx_queue tr tm->when retrnsmt uid timeout
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1
   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 222 1
   2: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 333 1
"""


def test_the_server_side_of_a_connection_is_found_in_the_tcp_table():
    assert socket_inode(TABLE, 8080, 0xD431) == 222
    assert socket_inode(TABLE, 8080, 1234) is None


def test_the_process_that_holds_an_accepted_socket_is_found():
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname())
        accepted, _ = server.accept()
        try:
            port, client_port = server.getsockname()[1], client.getsockname()[1]
            assert socket_owner([os.getpid()], port, client_port) == os.getpid()
            assert socket_owner([os.getppid()], port, client_port) is None
        finally:
            accepted.close()
            client.close()


async def test_the_joins_wait_for_every_reply_in_flight_then_follow_the_shuffled_order():
    schedule = JoinSchedule([2, 0, 1], step=0.1)
    first = asyncio.ensure_future(schedule.in_flight(0))
    await asyncio.sleep(0.01)
    assert not first.done()  # replies 1 and 2 are not in flight yet
    times = await asyncio.gather(schedule.in_flight(1), schedule.in_flight(2))
    at = {0: await first, 1: times[0], 2: times[1]}
    assert at[2] == schedule.begin
    assert abs(at[0] - at[2] - 0.1) < 1e-9 and abs(at[1] - at[2] - 0.2) < 1e-9
