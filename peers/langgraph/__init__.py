"""LangGraph's Agent Server (langgraph-api, in memory) serving a one-node echo graph over A2A 1.0 JSON-RPC: a plain
agent from code that is not the A2A SDKs'. It runs from an environment of its own (requirements.txt)."""
