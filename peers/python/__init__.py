"""A peer agent and client built on the official A2A Python SDK (a2a-sdk 1.3)."""
