"""A one-node echo graph: the reply repeats the last user message."""

from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def echo(state: State) -> dict:
    last = state["messages"][-1]
    text = last.content if isinstance(last.content, str) else str(last.content)
    return {"messages": [AIMessage(content=f"echo: {text}")]}


builder = StateGraph(State)
builder.add_node("echo", echo)
builder.add_edge(START, "echo")
builder.add_edge("echo", END)
graph = builder.compile()
