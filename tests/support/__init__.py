"""The harness tests and benchmarks share: a fake model server, real server processes, a
websocket client, a cuttable TCP proxy and the background-job runner. Kept apart from the tests
so that bench/ can import it without pulling in test modules."""
