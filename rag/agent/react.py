"""LlamaIndex's workflow ReActAgent with the paper's hop rules.

The flow: an initial retrieval through the modality router, then Thought → Action →
Observation hops. After each hop the stop rules run in the paper's order — hop cap, a
hop with no new fragment, the sufficiency self-check, the input-token budget. A stopped
run gets one more ReAct step told to answer (it reuses the model's prompt cache); if the
model still will not answer, or its output cannot be parsed twice, the answer is written
from the fragments already retrieved.
"""

from __future__ import annotations

import re
import time
from typing import Any

from llama_index.core.agent.react.formatter import ReActChatFormatter
from llama_index.core.agent.react.types import (
    ActionReasoningStep,
    ObservationReasoningStep,
    ResponseReasoningStep,
)
from llama_index.core.agent.workflow import AgentOutput, ReActAgent
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.utils import get_tokenizer
from pydantic import PrivateAttr

from rag.agent import prompts
from rag.agent.events import Stop, Thought
from rag.agent.state import RunState, complete, llm_call
from rag.agent.tools import TOOL_MODALITY, SearchTools

SOFT_STOPS = {"hop_cap", "no_new_fragments", "sufficient"}


class CompactReActFormatter(ReActChatFormatter):
    """ReAct prompt with one-line tool descriptions instead of JSON schemas."""

    def format(self, tools, chat_history, current_reasoning=None) -> list[ChatMessage]:
        tool_desc = "\n".join(f"- {t.metadata.name}: {t.metadata.description}" for t in tools)
        names = ", ".join(t.metadata.name for t in tools)
        header = self.system_header.format(tool_desc=tool_desc, tool_names=names)
        steps = [
            ChatMessage(
                role=self.observation_role if isinstance(s, ObservationReasoningStep) else MessageRole.ASSISTANT,
                content=s.get_content(),
            )
            for s in current_reasoning or []
        ]
        return [ChatMessage(role=MessageRole.SYSTEM, content=header), *chat_history, *steps]


class DocAgent(ReActAgent):
    _state: RunState = PrivateAttr()
    _search: SearchTools = PrivateAttr()
    _ctx: Any = PrivateAttr(default=None)

    @classmethod
    def for_run(cls, workspace, llm, state: RunState) -> DocAgent:
        search = SearchTools(workspace, state, llm)
        agent = cls(
            name="DocAgent",
            tools=search.tools(),
            llm=llm,
            formatter=CompactReActFormatter(system_header=prompts.REACT_HEADER),
            streaming=False,
        )
        agent._state, agent._search = state, search
        return agent

    # the ReAct step, wrapped with the stop rules

    async def take_step(self, ctx, llm_input, tools, memory) -> AgentOutput:
        state = self._state
        self._ctx = ctx
        if state.hops == 0:
            await self._initial_retrieval(ctx, tools)
        if state.stop_reason and state.stop_reason not in SOFT_STOPS:
            return await self._answer_from_fragments(ctx)
        output = await super().take_step(ctx, llm_input, tools, memory)
        if output.retry_messages:
            state.parse_failures += 1
            self._emit(Stop(run_id=state.run_id, hop=state.hops, reason="unparseable",
                            detail=(output.response.content or "")[:500]))
            if state.parse_failures > 1:
                state.stop_reason = "unparseable"
                return await self._answer_from_fragments(ctx)
            output.retry_messages[-1] = ChatMessage(
                role="user", content=prompts.UNPARSEABLE_RETRY.format(tool_names=", ".join(TOOL_MODALITY))
            )
            return output
        await self._emit_thought(ctx)
        if output.tool_calls and state.stop_reason:
            return await self._answer_from_fragments(ctx)  # told to answer, it searched again
        if not output.tool_calls:
            state.stop_reason = state.stop_reason or "answered"
        return output

    async def _get_response(self, current_llm_input: list[ChatMessage]) -> ChatResponse:
        t0, start = time.perf_counter(), time.time()
        response = await self.llm.achat(current_llm_input)
        self._emit(llm_call(self._state, "react", t0, start, response.raw, response.message.content or ""))
        return response

    async def handle_tool_call_results(self, ctx, results, memory) -> None:
        await super().handle_tool_call_results(ctx, results, memory)
        await self._apply_stop_rules(ctx)

    async def finalize(self, ctx, output: AgentOutput, memory) -> AgentOutput:
        """Keep only the question and the answer in memory, not the fragments of every hop."""
        text = output.response.content or ""
        if "Answer:" in text:
            text = text[text.find("Answer:") + len("Answer:"):].strip()
        output.response = ChatMessage(role=MessageRole.ASSISTANT, content=text)
        await memory.aput(output.response)
        await ctx.store.set(self.reasoning_key, [])
        return output

    # the paper's flow

    async def _initial_retrieval(self, ctx, tools) -> None:
        state = self._state
        observation = await self._search.hop(ctx, state.question, "auto", "initial retrieval (modality router)")
        action = next((n for n, m in TOOL_MODALITY.items() if m == state.last_route[0]), "TextSearch")
        reasoning = [
            ActionReasoningStep(thought=prompts.INITIAL_THOUGHT, action=action, action_input={"query": state.question}),
            ObservationReasoningStep(observation=observation),
        ]
        await ctx.store.set(self.reasoning_key, reasoning)
        await self._apply_stop_rules(ctx, tools)

    async def _apply_stop_rules(self, ctx, tools=None) -> None:
        """Hop cap, no new fragment, sufficiency, token budget — checked in that order."""
        state, cfg = self._state, self._state.settings
        if state.hops >= cfg.max_hops:
            reason = "hop_cap"
        elif not state.last_new_ids:
            reason = "no_new_fragments"
        elif cfg.sufficiency_check == "llm" and await self._sufficient(ctx):
            reason = "sufficient"
        elif await self._next_input_tokens(ctx, tools) > cfg.token_budget:
            reason = "token_budget"
        else:
            return
        state.stop_reason = reason
        self._emit(Stop(run_id=state.run_id, hop=state.hops, reason=reason))
        if reason in SOFT_STOPS:
            await self._tell_to_answer(ctx, reason)

    async def _tell_to_answer(self, ctx, reason: str) -> None:
        reasoning = await ctx.store.get(self.reasoning_key, default=[])
        last = reasoning[-1]
        last.observation += f"\n(No more searches: {reason.replace('_', ' ')}. Reply with Thought and Answer now.)"
        await ctx.store.set(self.reasoning_key, reasoning)

    async def _sufficient(self, ctx) -> bool:
        prompt = prompts.SUFFICIENCY.format(fragments=self._fragments(), question=self._state.question)
        reply = await complete(self.llm, ctx, self._state, prompt, "sufficiency", max_tokens=3)
        return reply.strip().lower().startswith("yes")

    async def _next_input_tokens(self, ctx, tools) -> int:
        memory = await ctx.store.get("memory")
        reasoning = await ctx.store.get(self.reasoning_key, default=[])
        tools = tools or self.tools
        messages = self.formatter.format(tools, await memory.aget(), reasoning)
        tokenize = get_tokenizer()
        return sum(len(tokenize(m.content or "")) for m in messages)

    async def _answer_from_fragments(self, ctx) -> AgentOutput:
        """The fallback: one plain completion over the best fragments, within the token budget.
        If the model fails here too, the error goes up to stream_answer, which records it and
        answers with the fragments."""
        state = self._state
        prompt = prompts.FINAL_ANSWER.format(fragments=self._fragments(), question=state.question)
        text = (await complete(self.llm, ctx, state, prompt, "final_answer")).strip()
        reasoning = await ctx.store.get(self.reasoning_key, default=[])
        reasoning.append(ResponseReasoningStep(thought="Answer from the fragments.", response=text))
        await ctx.store.set(self.reasoning_key, reasoning)
        return AgentOutput(response=ChatMessage(role="assistant", content=text), current_agent_name=self.name)

    def _fragments(self) -> str:
        """The best fragments seen so far and their pages, in about half the token budget."""
        workspace = self._search.workspace
        budget = max(self._state.settings.token_budget // 2 - workspace.page_tokens, 300)
        tokenize, kept = get_tokenizer(), []
        for hit in self._state.best_hits():
            budget -= len(tokenize(hit.fragment.text)) + 12
            if budget < 0:
                break
            kept.append(hit)
        return workspace.context(kept, many_files=self._state.many_files).text

    async def _emit_thought(self, ctx) -> None:
        reasoning = await ctx.store.get(self.reasoning_key, default=[])
        if reasoning and getattr(reasoning[-1], "thought", None):
            self._emit(Thought(run_id=self._state.run_id, hop=self._state.hops, text=reasoning[-1].thought))

    def _emit(self, event) -> None:
        if self._ctx is not None:
            self._ctx.write_event_to_stream(event)


_PAGE_CITE = re.compile(r"\[p\.?\s*(\d+)\]", re.I)


def cited_pages(answer: str) -> list[int]:
    return sorted({int(p) for p in _PAGE_CITE.findall(answer)})
