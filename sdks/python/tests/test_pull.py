"""The pull channel's pieces: the order streams are read in, the placement check, pool ids."""

import unittest

import redis

from agent_reach.codecs import MalformedEntry, decode_task, placement_miss, pool_id
from agent_reach.reader import StreamReader, band_rank, hash_tag

INBOX = "reach:{a:p1}:inbox"
POOLS = ["reach:{pool:crunch}:b2", "reach:{pool:crunch}:b1", "reach:{pool:crunch}",
         "reach:{pool:other}:b2", "reach:{pool:other}:b1", "reach:{pool:other}"]


class FakeRedis:
    """Answers XREADGROUP from per-stream lists of entries, recording every call."""

    def __init__(self, entries):
        self.entries = {k: list(v) for k, v in entries.items()}
        self.calls = []

    def xreadgroup(self, group, consumer, streams, count=None, block=None):
        self.calls.append((list(streams), count, block))
        reply = []
        for s in streams:
            got, self.entries[s] = self.entries.get(s, [])[:count], self.entries.get(s, [])[count:]
            if got:
                reply.append([s, [(i, {"n": i}) for i in got]])
        return reply


class StreamReaderTest(unittest.TestCase):
    def test_reads_the_inbox_then_every_pools_most_urgent_band_first(self):
        reader = StreamReader(INBOX, POOLS, "workers", "p1-a")
        self.assertEqual(reader.streams, [INBOX, POOLS[0], POOLS[3], POOLS[1], POOLS[4], POOLS[2], POOLS[5]])
        conn = FakeRedis({POOLS[2]: ["low-1", "low-2"], POOLS[4]: ["mid"], POOLS[0]: ["high"]})
        got = reader.read(conn, 1, 1000)
        self.assertEqual([(s, i) for s, i, _ in got], [(POOLS[0], "high")])
        got = reader.read(conn, 2, 1000)
        self.assertEqual([i for _, i, _ in got], ["mid", "low-1"])
        self.assertTrue(all(block is None for _, _, block in conn.calls), "a sweep never blocks")
        self.assertTrue(all(len(streams) == 1 for streams, _, _ in conn.calls), "one stream per call")

    def test_never_reads_more_entries_than_free_slots(self):
        reader = StreamReader(INBOX, POOLS, "workers", "p1-a")
        conn = FakeRedis({s: [f"{s}-{k}" for k in range(5)] for s in [INBOX, *POOLS]})
        for free in (1, 3, 7, 20):
            self.assertEqual(len(reader.read(conn, free, 1000)), free)

    def test_an_empty_sweep_blocks_on_free_streams_of_one_slot_count_one(self):
        reader = StreamReader(INBOX, POOLS[:3], "workers", "p1-a")
        conn = FakeRedis({})
        self.assertEqual(reader.read(conn, 2, 1000), [])
        streams, count, block = conn.calls[-1]
        self.assertEqual((streams, count, block), (POOLS[:2], 1, 1000))
        self.assertEqual({hash_tag(s) for s in streams}, {"pool:crunch"})

    def test_an_empty_sweep_blocks_first_on_the_band_that_last_gave_entries(self):
        reader = StreamReader(INBOX, POOLS[:3], "workers", "p1-a")
        conn = FakeRedis({POOLS[2]: ["low-1"]})
        self.assertEqual([i for _, i, _ in reader.read(conn, 1, 1000)], ["low-1"])
        self.assertEqual(reader.read(conn, 1, 1000), [])
        streams, count, block = conn.calls[-1]
        self.assertEqual((streams, count, block), ([POOLS[2]], 1, 1000))

    def test_a_push_agent_reads_its_inbox_in_one_blocking_call(self):
        conn = FakeRedis({INBOX: ["t1", "t2", "t3"]})
        got = StreamReader(INBOX, [], "workers", "a").read(conn, 2, 500)
        self.assertEqual([i for _, i, _ in got], ["t1", "t2"])
        self.assertEqual(conn.calls, [([INBOX], 2, 500)])

    def test_a_pool_stream_without_its_group_is_skipped_not_fatal(self):
        class NoGroup(FakeRedis):
            def xreadgroup(self, group, consumer, streams, count=None, block=None):
                if POOLS[0] in streams:
                    raise redis.ResponseError("NOGROUP No such key or consumer group")
                return super().xreadgroup(group, consumer, streams, count, block)

        conn = NoGroup({POOLS[1]: ["mid"]})
        reader = StreamReader(INBOX, POOLS[:3], "workers", "p1-a")
        with self.assertLogs("agent_reach", "WARNING"):
            self.assertEqual([i for _, i, _ in reader.read(conn, 2, 1000)], ["mid"])
        with self.assertRaises(redis.ResponseError):
            StreamReader(POOLS[0], [], "workers", "p1-a").read(conn, 1, 1000)  # an inbox: raised

    def test_band_rank_and_hash_tag(self):
        self.assertEqual([band_rank(s) for s in POOLS[:3]], [2, 1, 0])
        self.assertEqual(hash_tag("reach:{pool:acme/crunch}:b1"), "pool:acme/crunch")
        self.assertEqual(hash_tag("reach:{}:x"), "reach:{}:x")


def entry(**extra):
    return {"task_id": "t1", "capability": "crunch", "payload": "{}", "attempt": "1", **extra}


class PlacementTest(unittest.TestCase):
    def test_a_strict_region_of_elsewhere_or_a_missing_tag_is_not_ours(self):
        strict_eu = decode_task(entry(region="eu", region_policy="strict"))
        self.assertIsNone(placement_miss(strict_eu, "eu", [], ["crunch"]))
        self.assertEqual(placement_miss(strict_eu, "us", [], ["crunch"]), "region")
        self.assertEqual(placement_miss(strict_eu, None, [], ["crunch"]), "region")
        prefer_eu = decode_task(entry(region="eu"))
        self.assertEqual(prefer_eu.region_policy, "prefer")
        self.assertIsNone(placement_miss(prefer_eu, "us", [], ["crunch"]))
        gpu = decode_task(entry(tags='["gpu","crunch"]'))
        self.assertEqual(placement_miss(gpu, None, [], ["crunch"]), "tags")
        self.assertIsNone(placement_miss(gpu, None, ["gpu"], ["crunch"]))

    def test_unreadable_placement_is_malformed_never_no_constraint(self):
        for bad in ({"tags": "gpu"}, {"tags": '["no spaces"]'}, {"tags": "{}"},
                    {"region": "eu west"}, {"region": "eu", "region_policy": "sometimes"}):
            with self.subTest(bad=bad), self.assertRaises(MalformedEntry):
                decode_task(entry(**bad))
        self.assertEqual(decode_task(entry(tags="", region="")).tags, ())

    def test_the_pool_id_carries_the_tasks_tenant(self):
        self.assertEqual(pool_id(decode_task(entry())), "crunch")
        self.assertEqual(pool_id(decode_task(entry(task_id="acme/t1"))), "acme/crunch")


if __name__ == "__main__":
    unittest.main()
