"""How an agent reaches Redis: a URL (``redis://`` or ``rediss://``), TLS files, credentials and,
optionally, Sentinel or a Redis Cluster's seed nodes — the settings every Agent-Reach process
reads (docs/SETTINGS.md): REDIS_URL, REDIS_TLS_CA, REDIS_TLS_CERT, REDIS_TLS_KEY,
REDIS_USERNAME, REDIS_PASSWORD, REDIS_SENTINELS, REDIS_SENTINEL_NAME and REDIS_CLUSTER_NODES."""

import os
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple

import redis
import redis.sentinel

from .cluster import ClusterClient
from .settings import default

HostPort = Tuple[str, int]


def parse_host_ports(text: str, variable: str) -> Tuple[HostPort, ...]:
    """``host:port,host:port`` (an IPv6 host in brackets); ValueError naming ``variable``."""
    out = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\[[^\]]+\]|[^:\s]+):(\d{1,5})\s*", part)
        if not m or not 0 < int(m.group(2)) < 65536:
            raise ValueError(f"settings: {variable} must be host:port[,host:port...], got {part!r}")
        out.append((m.group(1).strip("[]"), int(m.group(2))))
    return tuple(out)


@dataclass(frozen=True)
class RedisConnection:
    """Where Redis is. ``connect()`` makes a client; the Redis user a register reply names (with
    ``REACH_AGENT_ACL=on``) wins over ``username``/``password``, which win over the URL's."""

    url: str = "redis://127.0.0.1:6379"
    tls_ca_file: Optional[str] = None
    tls_cert_file: Optional[str] = None
    tls_key_file: Optional[str] = None
    username: Optional[str] = None
    password: Optional[str] = None
    #: Sentinels to ask for the master; the URL then gives only scheme, credentials and database.
    sentinels: Tuple[HostPort, ...] = ()
    sentinel_name: str = "mymaster"
    #: Seed nodes of a Redis Cluster; the URL then gives only scheme and credentials.
    cluster_nodes: Tuple[HostPort, ...] = ()

    def __post_init__(self) -> None:
        if not re.match(r"^rediss?://", self.url):
            raise ValueError(f"settings: REDIS_URL must be a redis:// or rediss:// URL, got {_redact(self.url)!r}")
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ValueError("settings: REDIS_TLS_CERT and REDIS_TLS_KEY go together (set both or neither)")
        if self.sentinels and self.cluster_nodes:
            raise ValueError("settings: REDIS_CLUSTER_NODES and REDIS_SENTINELS exclude each other")
        for path, variable in ((self.tls_ca_file, "REDIS_TLS_CA"), (self.tls_cert_file, "REDIS_TLS_CERT"),
                               (self.tls_key_file, "REDIS_TLS_KEY")):
            if path is not None and not os.access(path, os.R_OK):
                raise ValueError(f"settings: {variable}={path} cannot be read")

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None, *, url: Optional[str] = None) -> "RedisConnection":
        """The settings from ``env`` (default ``os.environ``); ``url`` wins over REDIS_URL. A
        malformed one raises ValueError naming its variable."""
        source = os.environ if env is None else env

        def get(name: str) -> Optional[str]:
            value = (source.get(name) or "").strip()
            return value or None

        sentinels = get("REDIS_SENTINELS")
        nodes = get("REDIS_CLUSTER_NODES")
        return cls(
            url=url or get("REDIS_URL") or default("redis_url") or "redis://127.0.0.1:6379",
            tls_ca_file=get("REDIS_TLS_CA"),
            tls_cert_file=get("REDIS_TLS_CERT"),
            tls_key_file=get("REDIS_TLS_KEY"),
            username=get("REDIS_USERNAME"),
            password=get("REDIS_PASSWORD"),
            sentinels=parse_host_ports(sentinels, "REDIS_SENTINELS") if sentinels else (),
            sentinel_name=get("REDIS_SENTINEL_NAME") or "mymaster",
            cluster_nodes=parse_host_ports(nodes, "REDIS_CLUSTER_NODES") if nodes else (),
        )

    @property
    def tls(self) -> bool:
        """TLS: a ``rediss://`` URL, or TLS files given."""
        return self.url.startswith("rediss://") or self.tls_ca_file is not None or self.tls_cert_file is not None

    def client_kwargs(self, username: Optional[str] = None, password: Optional[str] = None) -> Dict[str, Any]:
        """redis-py connection arguments: credentials (``username``/``password`` first, then these
        settings', then the URL's), TLS files, decoded replies."""
        parts = urllib.parse.urlsplit(self.url)
        kwargs: Dict[str, Any] = {"decode_responses": True}
        user = username or self.username or (urllib.parse.unquote(parts.username) if parts.username else None)
        secret = password or self.password or (urllib.parse.unquote(parts.password) if parts.password else None)
        if user:
            kwargs["username"] = user
        if secret:
            kwargs["password"] = secret
        if self.tls:
            kwargs["ssl"] = True
            if self.tls_ca_file:
                kwargs["ssl_ca_certs"] = self.tls_ca_file
            if self.tls_cert_file:
                kwargs["ssl_certfile"] = self.tls_cert_file
                kwargs["ssl_keyfile"] = self.tls_key_file
        return kwargs

    def connect(self, username: Optional[str] = None, password: Optional[str] = None) -> Any:
        """A client: :class:`~agent_reach.cluster.ClusterClient` for a Cluster, the master
        Sentinel names, or a plain ``redis.Redis``."""
        kwargs = self.client_kwargs(username, password)
        if self.cluster_nodes:
            return ClusterClient(self.cluster_nodes, kwargs)
        parts = urllib.parse.urlsplit(self.url)
        db = int(parts.path.strip("/") or 0) if parts.path.strip("/").isdigit() else 0
        if self.sentinels:
            sentinel_kwargs = {k: v for k, v in kwargs.items() if k.startswith("ssl")}
            sentinel = redis.sentinel.Sentinel(list(self.sentinels), sentinel_kwargs=sentinel_kwargs)
            return sentinel.master_for(self.sentinel_name, db=db, **kwargs)
        host = parts.hostname or "127.0.0.1"
        return redis.Redis(host=host, port=parts.port or 6379, db=db, **kwargs)


def _redact(url: str) -> str:
    return re.sub(r"//[^@/]*@", "//***@", url)
