"""An agent's A2A AgentCard at registration (docs/PROTOCOL.md section 1, "Registering with an
AgentCard"): checked here as far as the agent itself needs it, and merged into the placement the
agent checks pool tasks against, the way registry-sync merges it into the registration."""

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Tuple

from .codecs import PROBE_CAPABILITY

#: The card extension whose params give an agent's region and routing tags.
PLACEMENT_EXTENSION_URI = "urn:agent-reach:placement:v1"
_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
_REGION = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass(frozen=True)
class CardPlacement:
    """What a registration with the card offers: its skills as capabilities, region, tags."""

    skills: Tuple[str, ...]
    region: Optional[str]
    tags: Tuple[str, ...]


def read_card(card: Any) -> CardPlacement:
    """The skills and placement of an inline card; ValueError naming what is wrong. The rest of
    the card is registry-sync's to check (``400 INVALID_CARD``)."""
    if not isinstance(card, Mapping) or not isinstance(card.get("name"), str):
        raise ValueError("card must be a JSON object with a name")
    skills = card.get("skills")
    if not isinstance(skills, list) or not all(isinstance(s, Mapping) for s in skills):
        raise ValueError("card.skills must be a list of objects")
    ids = [s.get("id") for s in skills]
    for skill_id in ids:
        if not isinstance(skill_id, str) or not _ID.match(skill_id):
            raise ValueError(f"card.skills: the id {skill_id!r} is not a capability id (^[A-Za-z0-9_.:-]{{1,128}}$)")
    if len(set(ids)) != len(ids):
        raise ValueError("card.skills: two skills have the same id")
    if PROBE_CAPABILITY in ids:
        raise ValueError(f"card.skills: the id {PROBE_CAPABILITY} is reserved for probes")
    extensions = (card.get("capabilities") or {}).get("extensions") or []
    params: Mapping[str, Any] = next(
        (e.get("params") or {} for e in extensions if isinstance(e, Mapping) and e.get("uri") == PLACEMENT_EXTENSION_URI),
        {},
    )
    region = params.get("region")
    if region is not None and (not isinstance(region, str) or not _REGION.match(region)):
        raise ValueError("card placement extension: params.region must match ^[A-Za-z0-9_.-]{1,64}$")
    tags = params.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) and _ID.match(t) for t in tags) or len(tags) > 64:
        raise ValueError("card placement extension: params.tags must be a list of up to 64 ids")
    return CardPlacement(tuple(ids), region, tuple(dict.fromkeys(tags)))


def merge_placement(
    region: Optional[str], tags: Iterable[str], card: CardPlacement
) -> Tuple[Optional[str], Tuple[str, ...]]:
    """The agent's own region wins over the card's; tags are the union, the agent's first."""
    return (region if region is not None else card.region), tuple(dict.fromkeys([*tags, *card.tags]))
