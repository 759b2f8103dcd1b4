"""A small memory-bank@1 file for one owner, written for the acceptance journeys.

It holds what the rules provider turns into each kind of proposal — an exact copy
(the same belief recorded twice from one message: a merge), three beliefs on one subject
from three conversations (a summary worth proposing: more than one search renders), two
that disagree (a conflict) — a private marker planted in one summarised belief and its
message for the erasure check, and a few unrelated beliefs so that search has something to
rank. Each message is its own conversation. IDs derive from a seed, so two owners can import banks that never share an ID.
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

START = datetime(2026, 10, 5, 9, 0, tzinfo=timezone.utc)


def _iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class AcceptanceBank:
    seed: str
    marker: str  # private words planted in one summarised belief and its message only
    ids: dict = field(default_factory=dict)
    statements: dict = field(default_factory=dict)

    def _id(self, name: str) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"veetbot-acceptance/{self.seed}/{name}"))

    def document(self) -> dict:
        events, memories, sessions = [], [], []
        # name -> (subject, owner's message, statement, belief type, copies)
        beliefs = {
            "celsius": ("weather units", "I prefer Celsius for the weather, always.",
                        "The owner prefers Celsius for weather.", "preference", 2),
            "run_tuesday": ("running", "I go running every Tuesday morning.",
                            "The owner runs on Tuesday mornings.", "routine", 1),
            "run_river": ("running", f"My running route follows the river past the {self.marker} mural.",
                          f"The owner runs along the river past the {self.marker} mural.", "routine", 1),
            "run_shoes": ("running", "I run in grey trail shoes.", "The owner runs in grey trail shoes.", "routine", 1),
            "floor_3": ("home", "My flat is on the third floor.", "The owner's flat is on floor 3.", "fact", 1),
            "floor_4": ("home", "Actually the flat is on floor 4.", "The owner's flat is on floor 4.", "fact", 1),
            "tea": ("afternoon drinks", "In the afternoon I drink green tea.",
                    "The owner drinks green tea in the afternoon.", "routine", 1),
            "pottery": ("hobbies", "I take a pottery class on Thursdays.",
                        "The owner takes a pottery class on Thursdays.", "routine", 1),
            "sister": ("family", "My sister Ana lives in Porto.", "The owner's sister Ana lives in Porto.",
                       "relationship", 1),
            "bike": ("commute", "I cycle to the office.", "The owner cycles to the office.", "routine", 1),
        }
        for index, (name, (subject, message, statement, belief_type, copies)) in enumerate(beliefs.items()):
            at = START + timedelta(hours=index)
            session = self._id(f"session/{name}")
            sessions.append({"id": session, "scope": "user", "started_at": _iso(at)})
            event, part = self._id(f"event/{name}"), self._id(f"part/{name}")
            events.append({"id": event, "session": session, "kind": "user.message.created", "speaker": "owner",
                           "created_at": _iso(at), "parts": [{"id": part, "text": message}]})
            for copy in range(copies):
                memory_id = self._id(f"memory/{name}/{copy}")
                self.ids.setdefault(name, []).append(memory_id)
                self.statements[name] = statement
                memories.append({
                    "id": memory_id, "subject": subject, "statement": statement, "belief_type": belief_type,
                    "claim_kind": "claim", "polarity": "affirmed", "derivation": "explicit", "attribution": "owner",
                    "authority": "USER", "sensitivity": "internal", "scope": "user", "portable": True,
                    "confidence": 0.9, "evidence_at": _iso(at), "valid_from": _iso(at), "expires_at": None,
                    "entity_ids": [], "status": "active", "created_at": _iso(at + timedelta(seconds=5 + copy)),
                    "sources": [{"event": event, "part": part}],
                })
        return {"format": "memory-bank@1", "people": [],
                "sessions": sessions,
                "events": events, "memories": memories}

    def write(self, path: Path) -> Path:
        path.write_text(json.dumps(self.document(), indent=1))
        return path

    @property
    def memory_count(self) -> int:
        return sum(len(ids) for ids in self.ids.values())
