"""Client settings from the environment, as the TypeScript SDK and the CLI read them: REACH_KEY,
REACH_ROUTER_URL, REACH_REGISTRY_URL, REACH_AGENT_ID and REDIS_URL (docs/SETTINGS.md, Clients).
The names and defaults are generated from the settings table in packages/protocol
(_settings_table.py); an earlier spelling still works for one release, with one warning."""

import logging
import os
from typing import Mapping, Optional, Set

from ._settings_table import CLIENT_SETTINGS, DEPRECATED_MESSAGE

log = logging.getLogger("agent_reach")

#: Earlier spellings already warned about: one warning per spelling and process.
_warned: Set[str] = set()


def default(name: str) -> Optional[str]:
    """The default of the client setting ``name``; None when it has none."""
    return CLIENT_SETTINGS[name][1]


def setting(name: str, env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The value of the client setting ``name`` (``"api_key"``, ``"router_url"``,
    ``"registry_url"``, ``"agent_id"`` or ``"redis_url"``): its variable in ``env`` (default
    ``os.environ``), else an earlier spelling (``REACH_API_KEY``, ``ROUTER_URL``, ``REGISTRY_URL``,
    ``AGENT_ID``) with a one-line warning naming the new one, else the default (None for none).
    A blank value counts as unset; values are stripped."""
    variable, default, earlier = CLIENT_SETTINGS[name]
    source = os.environ if env is None else env
    value = (source.get(variable) or "").strip()
    if value:
        return value
    for old in earlier:
        value = (source.get(old) or "").strip()
        if not value:
            continue
        if old not in _warned:
            _warned.add(old)
            log.warning(DEPRECATED_MESSAGE.format(deprecated=old, current=variable))
        return value
    return default
