# Generated from packages/protocol/src/settings/client.ts by
# npm run docs:settings -w @agent-reach/protocol: edit the table there, not this file.
"""The client settings: name -> (environment variable, default, earlier spellings)."""

CLIENT_SETTINGS = {
    "api_key": ("REACH_KEY", None, ("REACH_API_KEY",)),
    "router_url": ("REACH_ROUTER_URL", "http://127.0.0.1:8081", ("ROUTER_URL",)),
    "registry_url": ("REACH_REGISTRY_URL", "http://127.0.0.1:8080", ("REGISTRY_URL",)),
    "agent_id": ("REACH_AGENT_ID", None, ("AGENT_ID",)),
    "redis_url": ("REDIS_URL", "redis://127.0.0.1:6379", ()),
}

#: The warning for a setting given under an earlier spelling.
DEPRECATED_MESSAGE = "{deprecated} is deprecated and will be ignored from the next release: set {current} instead"
