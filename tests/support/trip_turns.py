"""A 25-turn conversation a person might have while planning a trip: short messages with
facts, decisions and tasks inside them (the real-servers conversation and the prompt-prefix
tests drive it)."""

TRIP_TURNS = [
    "Hi! I want to plan a visit to my sister this spring.",
    "Where does Ana live, again?",
    "I think we will go in May, for five days.",
    "Should we take the train or drive the Fiat?",
    "The car needs new tyres first, so let's say the train.",
    "We decided to take the train. Can you remind me what Ana does for work?",
    "I need to book the train tickets by Friday.",
    "What Portuguese phrases should I practise before the trip?",
    "Give me three phrases for ordering food.",
    "I'm vegetarian, so how do I ask whether a dish has meat?",
    "Can Rex come with us on the train?",
    "Ana has a small flat, so we will stay in a hotel near the river.",
    "What should I pack for Porto in May?",
    "Remind me what I still have to book.",
    "Ana's birthday is on the 12th of May; we should bring a present.",
    "What present would a nurse like?",
    "Let's buy her a good pair of walking shoes.",
    "I also want to try a ramen place in Porto if there is one.",
    "How do I say 'thank you very much' in Portuguese?",
    "What day is Ana's birthday again?",
    "We decided on the hotel by the river. I need to pay the deposit this week.",
    "Summarise what we have planned so far.",
    "Which things are still open?",
    "What was my dog's name, and does he like the beach?",
    "Thanks, that's all for today.",
]
