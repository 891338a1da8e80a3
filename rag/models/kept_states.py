"""llama.cpp states kept in memory, so a prompt that starts like an earlier one (the same page, asked again)
resumes from it instead of reading its text again."""

from __future__ import annotations

import ctypes

import llama_cpp
from llama_cpp import Llama, LlamaRAMCache, LlamaState


class KeptStates(LlamaRAMCache):
    """States kept by recency within a capacity, resumed only for a prompt they hold three quarters of at least
    (the same page, another question): one sharing only a prompt's beginning (the task, a page's first lines)
    saves little, and resuming mid-page changes how the rest is decoded, and so, at times, the answer."""

    def __getitem__(self, key) -> LlamaState:
        key = tuple(key)
        best = self._find_longest_prefix_key(key)
        if best is None or Llama.longest_token_prefix(best, key) < 0.75 * len(key):
            raise KeyError("no kept state holds most of this prompt")  # and none is counted as used
        self.cache_state.move_to_end(best)
        return self.cache_state[best]


class KeptStatesLlama(Llama):
    """A Llama whose kept states are its KV cache alone: llama-cpp-python also copies the logits of up to
    512 tokens into each (~300 MB for this vocabulary, unaccounted by the cache's capacity), which sampling
    no longer reads."""

    def __init__(self, *args, cache_mb: int = 0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if cache_mb:
            self.set_cache(KeptStates(capacity_bytes=cache_mb << 20))

    def save_state(self) -> LlamaState:
        size = llama_cpp.llama_state_get_size(self._ctx.ctx)
        data = (ctypes.c_uint8 * size)()
        used = llama_cpp.llama_state_get_data(self._ctx.ctx, data, size)
        return LlamaState(input_ids=self.input_ids.copy(), scores=self.scores[:0].copy(), n_tokens=self.n_tokens,
                          llama_state=ctypes.string_at(data, used), llama_state_size=used, seed=self._seed)

    def load_state(self, state: LlamaState) -> None:
        self.input_ids = state.input_ids.copy()
        self.n_tokens, self._seed = state.n_tokens, state.seed
        self._requires_eval = True  # the suffix after the kept prefix is decoded before sampling
        data = (ctypes.c_uint8 * state.llama_state_size).from_buffer_copy(state.llama_state)
        if llama_cpp.llama_state_set_data(self._ctx.ctx, data, state.llama_state_size) != state.llama_state_size:
            raise RuntimeError("llama.cpp refused a kept state")
