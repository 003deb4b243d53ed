"""Redis connection settings from the environment, and the Cluster client's routing."""

import tempfile
import unittest

import redis
from redis.crc import key_slot

from agent_reach.cluster import ClusterClient
from agent_reach.connection import RedisConnection


class SettingsTest(unittest.TestCase):
    def test_reads_the_shared_redis_settings(self):
        c = RedisConnection.from_env({
            "REDIS_URL": "rediss://u:p@r.example:6380/2",
            "REDIS_CLUSTER_NODES": "10.0.0.1:7000, [::1]:7001",
            "REDIS_USERNAME": "ops",
        })
        self.assertEqual(c.cluster_nodes, (("10.0.0.1", 7000), ("::1", 7001)))
        self.assertTrue(c.tls)
        kwargs = c.client_kwargs()
        self.assertEqual((kwargs["username"], kwargs["password"], kwargs["ssl"]), ("ops", "p", True))
        # The Redis user a register reply names wins over the settings and the URL.
        self.assertEqual(c.client_kwargs("agent-user", "agent-pass")["username"], "agent-user")
        self.assertEqual(RedisConnection.from_env({}).url, "redis://127.0.0.1:6379")
        self.assertEqual(RedisConnection.from_env({"REDIS_URL": "redis://x:1"}, url="redis://y:2").url, "redis://y:2")

    def test_a_malformed_setting_is_named(self):
        cases = [
            ({"REDIS_CLUSTER_NODES": "host-without-port"}, "REDIS_CLUSTER_NODES"),
            ({"REDIS_SENTINELS": "a:0"}, "REDIS_SENTINELS"),
            ({"REDIS_SENTINELS": "a:1", "REDIS_CLUSTER_NODES": "b:2"}, "exclude each other"),
            ({"REDIS_TLS_CERT": "/c.pem"}, "REDIS_TLS_CERT and REDIS_TLS_KEY go together"),
            ({"REDIS_TLS_CA": "/no/such/ca.pem"}, "REDIS_TLS_CA=/no/such/ca.pem cannot be read"),
            ({"REDIS_URL": "http://secret:pw@x:1"}, "REDIS_URL"),
        ]
        for env, message in cases:
            with self.subTest(env=env), self.assertRaisesRegex(ValueError, message) as caught:
                RedisConnection.from_env(env)
            self.assertNotIn("pw", str(caught.exception))

    def test_tls_files_turn_tls_on_and_are_passed_to_redis_py(self):
        with tempfile.NamedTemporaryFile(suffix=".pem") as ca:
            c = RedisConnection.from_env({"REDIS_TLS_CA": ca.name})
            kwargs = c.client_kwargs()
            self.assertEqual((kwargs["ssl"], kwargs["ssl_ca_certs"]), (True, ca.name))

    def test_sentinel_gives_a_client_of_the_named_master(self):
        client = RedisConnection.from_env({"REDIS_SENTINELS": "127.0.0.1:26379", "REDIS_SENTINEL_NAME": "reach"}).connect()
        self.assertEqual(client.connection_pool.service_name, "reach")


class FakeNode:
    """A node answering CLUSTER SLOTS with ``table``, and commands with its name or a redirect."""

    def __init__(self, name, table, redirect=None):
        self.name, self.table, self.redirect, self.calls = name, table, redirect, []

    def execute_command(self, *args):
        self.calls.append(args)
        if args[0] == "CLUSTER SLOTS":
            return self.table
        if self.redirect:
            redirect, self.redirect = self.redirect, None
            raise redis.ResponseError(redirect)
        return self.name

    def xack(self, name, group, *ids):
        return self.execute_command("XACK", name, group, *ids)

    def close(self):
        pass


class ClusterClientTest(unittest.TestCase):
    def make(self, nodes):
        return ClusterClient([("a", 1)], {}, connect=lambda address: nodes[address])

    def test_each_command_goes_to_the_master_of_its_keys_slot_and_follows_moved(self):
        inbox = "reach:{a:p1}:inbox"
        slot = key_slot(inbox.encode())
        table = [[0, slot, ["a", 1]], [slot + 1, 16383, ["b", 2]]]
        moved_table = [[0, slot - 1, ["a", 1]], [slot, 16383, ["b", 2]]]
        nodes = {("a", 1): FakeNode("a", table, redirect=f"MOVED {slot} b:2"), ("b", 2): FakeNode("b", moved_table)}
        client = self.make(nodes)
        self.assertEqual(client.execute_command("XADD", "reach:{pool:zzz}", "*", "f", "v"),
                         "a" if key_slot(b"pool:zzz") <= slot else "b")
        nodes[("a", 1)].table = moved_table  # the slot moved: a answers MOVED once, then the map says b
        nodes[("a", 1)].redirect = f"MOVED {slot} b:2"
        self.assertEqual(client.xack(inbox, "workers", "1-0"), "b")
        self.assertEqual(client._slots[slot], ("b", 2))

    def test_no_seed_answering_is_a_connection_error(self):
        class Down(FakeNode):
            def execute_command(self, *args):
                raise redis.ConnectionError("refused")

        with self.assertRaisesRegex(redis.ConnectionError, "no seed"):
            self.make({("a", 1): Down("a", [])})


if __name__ == "__main__":
    unittest.main()
