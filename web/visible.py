"""Whether a text has anything to see: "empty" means no visible character, not only no
whitespace. A message of zero-width spaces, joiners, bidi marks, variation selectors,
fillers or controls shows nothing, yet would cost a model call."""

import unicodedata

# Categories that draw nothing on their own: separators (spaces, line and paragraph),
# controls, format characters (zero-width, bidi, tags), surrogates, unassigned, and
# combining marks with no base (variation selectors among them).
_UNSEEN_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Cn", "Mn", "Me"})
# Letters and symbols that are blank by design (Hangul fillers, the blank Braille pattern).
_BLANK_CHARACTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def is_visible(character: str) -> bool:
    return (
        character not in _BLANK_CHARACTERS
        and unicodedata.category(character) not in _UNSEEN_CATEGORIES
    )


def has_visible_text(text: str) -> bool:
    """True when at least one character of ``text`` would show."""
    return any(is_visible(character) for character in text)
