"""Exponential backoff with jitter, as the TypeScript SDK's (util/backoff.ts)."""

import random


class Backoff:
    """``next()`` gives base, 2 x base, 4 x base... capped at ``cap_s``, each within +-``jitter``."""

    def __init__(self, base_s: float, cap_s: float, jitter: float = 0.2) -> None:
        if base_s <= 0 or cap_s < base_s or not 0 <= jitter < 1:
            raise ValueError(f"backoff needs 0 < base_s <= cap_s and 0 <= jitter < 1, got {base_s}, {cap_s}, {jitter}")
        self.base_s, self.cap_s, self.jitter = base_s, cap_s, jitter
        self._n = 0

    def next(self) -> float:
        """The next delay in seconds."""
        delay = min(self.cap_s, self.base_s * 2 ** min(self._n, 32))
        self._n += 1
        return delay * random.uniform(1 - self.jitter, 1 + self.jitter)

    def reset(self) -> None:
        """Back to ``base_s``."""
        self._n = 0
