"""A labelled retrieval set for ``bench/memory.py``: planted facts, paraphrased questions,
distractors. Deterministic: the same arguments give the same set on every machine and run.

How it was built (written in full before anything was measured against it, and not tuned to
any retriever afterwards):

* **Four users** ("personas": family and home, an ops engineer, health and travel, a bakery
  owner), each with 13 **planted facts**: a user message that states the fact, the way people
  mention things in passing, sometimes inside a longer message.
* Each fact has **one or two questions** asked later, worded the way someone asks when they do
  not remember their own wording: synonyms ("dental checkup" for "dentist appointment"),
  other word forms, other phrasings ("my husband's mom" for "my mother-in-law"). Some share
  no content word with the statement at all; the benchmark reports that split.
* Each fact has two or three **near misses**: messages of the same user that share words with
  the question or the statement but do not state the fact ("My dentist says I should floss
  more"). They are hard negatives.
* The rest are **distractors** from ``bench/corpus.py`` (generic user/assistant chat about
  software, cooking, travel; a per-user seed), split over several conversations; planted
  statements and near misses are inserted at random positions (seeded), each followed by a
  short assistant acknowledgement that does not repeat it.
* Every planted fact also has a third-person **fact text** (as the memory extractor would
  write it); every other fact (even index within its persona) is stored as a ``Fact`` row
  whose source message is the planted message, beside **background facts**, decisions and
  action items that no question asks about (distractors of those kinds). Fact rows of both
  groups draw their importance from the same range.
* Timestamps spread over the last 180 days (conversations start on random days; messages are
  30-90 s apart); planted messages get the time of the position they land at.

A hit is **relevant** to a question when it is the planted message or the planted ``Fact``
row (whose source is the planted message): the kinds and ids are in ``Question.relevant`` once
``bench/memory.py`` has stored the set.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from bench.corpus import chat_messages

DAYS = 180


@dataclass(frozen=True)
class Planted:
    statement: str  # the user message that states the fact
    questions: tuple[str, ...]  # asked later, in other words
    fact: str  # third-person text, for the Fact row
    near_misses: tuple[str, ...]  # same user, shared words, not the fact
    category: str = "personal"


@dataclass(frozen=True)
class Persona:
    name: str
    planted: tuple[Planted, ...]
    background_facts: tuple[str, ...]
    decisions: tuple[str, ...]
    action_items: tuple[str, ...]


P = Planted

MAYA = Persona(
    name="maya",
    planted=(
        P(
            "Can you remind me later that my sister's dentist appointment is on Thursday at "
            "3pm? I promised to drive her.",
            (
                "When does my sister see the dentist?",
                "What time do I need to drive my sister to her dental checkup?",
            ),
            "The user's sister has a dentist appointment on Thursday at 3pm; the user drives her.",
            (
                "My dentist says I should floss more, which, fair.",
                "Thursday is always chaos at work, we have three meetings back to back.",
                "My sister just got back from Lisbon and won't stop talking about pastries.",
            ),
            "schedule",
        ),
        P(
            "Our daughter Zoe is allergic to peanuts, so the birthday party food has to be "
            "nut-free.",
            ("Which food allergy does Zoe have?", "Is there anything my kid can't eat?"),
            "The user's daughter Zoe is allergic to peanuts.",
            (
                "Zoe wants a unicorn cake for her birthday this year.",
                "Is peanut butter actually healthy or is it mostly fat?",
                "The party venue said they can do a food table for 20 kids.",
            ),
        ),
        P(
            "We finally picked a name for the puppy: Biscuit. He's a beagle mix.",
            ("What did we call our new dog?", "What breed is Biscuit?"),
            "The user's puppy is called Biscuit, a beagle mix.",
            (
                "The neighbour's dog barks every night at 2am.",
                "Do you have a good recipe for biscuits without buttermilk?",
                "What's the best way to crate train a new puppy?",
            ),
        ),
        P(
            "My mother-in-law arrives on the 14th and stays for two weeks, she's flying in from "
            "Manila.",
            (
                "When is my husband's mom coming to visit?",
                "How long will my mother-in-law be staying with us?",
            ),
            "The user's mother-in-law arrives on the 14th from Manila and stays two weeks.",
            (
                "My mom keeps sending me articles about vitamin D.",
                "Flights to Manila are crazy expensive in December.",
                "Two weeks of holidays and I still feel tired.",
            ),
            "schedule",
        ),
        P(
            "The landlord said the rent goes up to 1,850 a month starting in March.",
            ("How much will our rent be after the increase?", "What's the new monthly rent?"),
            "The user's rent rises to 1,850 a month from March.",
            (
                "Our landlord still hasn't fixed the leaking tap.",
                "March is when the kids' school trip is.",
                "Is it better to rent or buy in the current market?",
            ),
        ),
        P(
            "Zoe's piano lessons are Tuesdays at 5 with Mrs. Okafor.",
            ("Who teaches my daughter piano?", "On which day does Zoe have music class?"),
            "Zoe has piano lessons on Tuesdays at 5 with Mrs. Okafor.",
            (
                "I want to learn guitar but I never find the time.",
                "Tuesday evenings are when I do the grocery run.",
                "Zoe's teacher at school says she's doing great in maths.",
            ),
            "schedule",
        ),
        P(
            "I wear contact lenses, minus 2.5 in both eyes, and I keep forgetting to reorder them.",
            ("What's my eyeglass prescription?", "How strong are my contacts?"),
            "The user wears contact lenses of -2.5 in both eyes.",
            (
                "My eyes get tired after staring at the screen all day.",
                "Should I reorder printer ink or just buy a new printer?",
            ),
        ),
        P(
            "My husband Daniel works night shifts at the hospital on weekends.",
            ("When does Daniel work?", "What is my spouse's job schedule?"),
            "The user's husband Daniel works weekend night shifts at the hospital.",
            (
                "The hospital parking is impossible on weekdays.",
                "Weekend plans: cleaning out the garage, finally.",
                "Daniel thinks we should repaint the kitchen.",
            ),
        ),
        P(
            "The car's registration expires at the end of June, I need to renew it online.",
            ("When do I have to renew the vehicle registration?",),
            "The user's car registration expires at the end of June.",
            (
                "The car makes a weird noise when I brake.",
                "June is going to be busy with Zoe's recital.",
            ),
            "schedule",
        ),
        P(
            "We're saving for a trip to Japan next spring, the budget is about 6,000 euros.",
            (
                "How much are we planning to spend on the Japan holiday?",
                "Where are we travelling next year?",
            ),
            "The user is saving for a trip to Japan next spring with a budget of about 6,000 "
            "euros.",
            (
                "My colleague just came back from Japan and brought matcha KitKats.",
                "Spring cleaning this weekend, wish me luck.",
            ),
        ),
        P(
            "Biscuit's vet is Dr. Alvarez at the Elm Street clinic.",
            ("Who is our dog's veterinarian?", "Which clinic do we take Biscuit to?"),
            "Biscuit's vet is Dr. Alvarez at the Elm Street clinic.",
            (
                "There's a new clinic opening on Elm Street, some kind of physio place.",
                "How often should a dog get vaccinated?",
            ),
        ),
        P(
            "I'm lactose intolerant, so please don't suggest recipes with cream or milk.",
            ("Can I have dairy?", "Which ingredients should recipes for me avoid?"),
            "The user is lactose intolerant: no cream or milk in recipes.",
            (
                "What's a good recipe for a quick weeknight curry?",
                "Oat milk or almond milk for coffee?",
            ),
            "preference",
        ),
        P(
            "My parents live in Ghent, about an hour's drive from us.",
            ("Which city do my folks live in?", "How far away are my parents?"),
            "The user's parents live in Ghent, an hour's drive away.",
            (
                "My parents keep asking when we'll visit.",
                "Ghent has the best fries, fight me.",
            ),
        ),
    ),
    background_facts=(
        "The user works part-time as a graphic designer.",
        "The user prefers short answers with bullet points.",
        "The user's favourite cuisine is Vietnamese.",
        "The user is trying to read one book a month.",
        "The user's kitchen was renovated last year.",
        "The user does yoga on Sunday mornings.",
        "The user's family uses a shared Google calendar.",
        "The user dislikes horror films.",
    ),
    decisions=(
        "Repaint the living room in a light grey",
        "Book the summer holiday through a travel agent this year",
    ),
    action_items=(
        "Order new school shoes for Zoe",
        "Call the insurance company about the broken window",
    ),
)

TOM = Persona(
    name="tom",
    planted=(
        P(
            "Our staging server runs on Hetzner, the production one is still on AWS.",
            (
                "Which hosting provider do we use for staging?",
                "Where is the staging environment hosted?",
            ),
            "The team's staging server runs on Hetzner; production is on AWS.",
            (
                "The staging server is out of disk again.",
                "AWS billing alerts keep firing for no reason.",
                "Is Hetzner's object storage S3 compatible?",
            ),
            "technical",
        ),
        P(
            "We decided to use PostgreSQL 16 for the new billing service instead of MySQL.",
            (
                "What database did we choose for billing?",
                "Which DB engine does the billing service use?",
            ),
            "The new billing service uses PostgreSQL 16 (chosen over MySQL).",
            (
                "MySQL keeps dropping connections under load.",
                "The billing team wants a dashboard by Friday.",
                "How do I vacuum a PostgreSQL table without locking it?",
            ),
            "project",
        ),
        P(
            "The on-call rotation changes every Monday at 9am, handover happens in #ops-handover.",
            ("When does the on-call shift switch?", "Where do we do the on-call handoff?"),
            "The on-call rotation changes Mondays at 9am, with handover in #ops-handover.",
            (
                "Monday's standup got cancelled.",
                "I was on call last week and got paged four times.",
            ),
            "schedule",
        ),
        P(
            "Our API rate limit for partners is 600 requests per minute per key.",
            (
                "What's the partner throttle on the API?",
                "How many calls per minute can a partner make?",
            ),
            "The partner API rate limit is 600 requests per minute per key.",
            (
                "We got a 429 from the payment provider again.",
                "The API docs need a section on pagination.",
            ),
            "technical",
        ),
        P(
            "Priya is the tech lead for the mobile app, ask her before changing the auth flow.",
            (
                "Who leads the mobile team technically?",
                "Who should I check with before touching mobile login?",
            ),
            "Priya is the mobile app's tech lead; auth flow changes go through her.",
            (
                "The mobile app crashes on Android 12 when offline.",
                "Priya's birthday lunch is on Friday.",
            ),
            "project",
        ),
        P(
            "The TLS certificates for api.example.com expire on 2 May; renewal is manual "
            "because of the old load balancer.",
            ("When do the API certs run out?", "Why isn't certificate renewal automated?"),
            "The api.example.com TLS certificates expire on 2 May and are renewed by hand "
            "because of the old load balancer.",
            (
                "Let's Encrypt rate limits bit us last year.",
                "The load balancer config is in the infra repo.",
            ),
            "technical",
        ),
        P(
            "Database backups run nightly at 02:30 UTC and are kept for 35 days.",
            (
                "How long do we retain DB backups?",
                "What time does the nightly backup job start?",
            ),
            "Database backups run nightly at 02:30 UTC and are kept 35 days.",
            (
                "The backup of my laptop failed again.",
                "We need to test a restore at some point.",
            ),
            "technical",
        ),
        P(
            "Our main repo is a monorepo in GitLab, not GitHub, since the 2022 migration.",
            ("Where is our code hosted?", "Do we use GitHub?"),
            "The team's main repository is a GitLab monorepo (moved from GitHub in 2022).",
            (
                "I starred a cool repo on GitHub about terminal colour themes.",
                "The monorepo build takes 40 minutes now.",
            ),
            "technical",
        ),
        P(
            "The deploy freeze for the holidays starts December 18 and ends January 3.",
            (
                "When does the holiday code freeze begin?",
                "Until when can't we ship to production in winter?",
            ),
            "The holiday deploy freeze runs from December 18 to January 3.",
            (
                "Can we deploy on Fridays? Asking for a friend.",
                "January is when we plan the roadmap.",
            ),
            "schedule",
        ),
        P(
            "Redis in production has 8 GB of memory and evicts with allkeys-lru.",
            (
                "What's the eviction policy of our cache?",
                "How much RAM does the prod Redis instance have?",
            ),
            "Production Redis has 8 GB of memory and the allkeys-lru eviction policy.",
            (
                "The cache hit ratio dropped after the release.",
                "My laptop has 8 GB of memory and it's not enough.",
            ),
            "technical",
        ),
        P(
            "Our error budget is 99.9% availability per quarter for the public API.",
            ("What's our SLO for the API?", "What uptime target do we promise?"),
            "The public API's availability target is 99.9% per quarter.",
            (
                "The status page showed a partial outage yesterday.",
                "Quarter planning starts next week.",
            ),
            "technical",
        ),
        P(
            "I'm allergic to cats, so I can't do the office visit at the Berlin site, they "
            "have two office cats.",
            ("Why can't I go to the Berlin office?", "What animal am I allergic to?"),
            "The user is allergic to cats (the Berlin office has two cats).",
            (
                "Berlin in winter is grim.",
                "Someone brought their dog to the office today.",
            ),
        ),
        P(
            "The Kafka cluster has 12 partitions per topic by default.",
            ("How many partitions do our topics get?",),
            "The Kafka cluster defaults to 12 partitions per topic.",
            (
                "Kafka consumer lag spiked during the deploy.",
                "Should I use Kafka or RabbitMQ for a small project?",
            ),
            "technical",
        ),
    ),
    background_facts=(
        "The user is a site reliability engineer.",
        "The user prefers answers with shell commands.",
        "The team uses Terraform for infrastructure.",
        "The user works remotely from Rotterdam.",
        "The team's sprint length is two weeks.",
        "The user is learning Rust in their spare time.",
        "The team uses Grafana for dashboards.",
        "The user likes detailed explanations of trade-offs.",
    ),
    decisions=(
        "Move the logging pipeline from Elasticsearch to Loki",
        "Adopt trunk-based development for the web app",
    ),
    action_items=(
        "Write the postmortem for last Tuesday's outage",
        "Upgrade the ingress controller on the staging cluster",
    ),
)

LENA = Persona(
    name="lena",
    planted=(
        P(
            "I'm training for the Berlin marathon on September 29th, aiming for under four hours.",
            (
                "What's my target finish time for the marathon?",
                "When is the race I'm training for?",
            ),
            "The user is training for the Berlin marathon on September 29th, aiming for under "
            "four hours.",
            ("My knee hurts after long runs.", "Berlin was lovely in the spring."),
            "schedule",
        ),
        P(
            "My physiotherapist is Jonas, sessions are Wednesdays at 7:30am.",
            ("Who is my physio?", "What day is physical therapy?"),
            "The user's physiotherapist is Jonas; sessions are Wednesdays at 7:30am.",
            ("Wednesday I have the late shift.", "Is physiotherapy covered by public insurance?"),
            "schedule",
        ),
        P(
            "I'm vegetarian but I eat fish occasionally, so pescatarian really.",
            ("What diet do I follow?", "Do I eat meat?"),
            "The user is pescatarian (vegetarian who eats fish occasionally).",
            (
                "Fish tacos are the best thing ever invented.",
                "My brother went vegan and won't shut up about it.",
            ),
            "preference",
        ),
        P(
            "My passport expires in November 2025, I need to renew it before the Peru trip.",
            (
                "When does my travel document run out?",
                "Is my passport still valid for South America?",
            ),
            "The user's passport expires in November 2025.",
            (
                "The Peru itinerary has three days in Cusco.",
                "November is the worst month weather-wise.",
            ),
            "schedule",
        ),
        P(
            "I take 50 mg of sertraline every morning.",
            ("What medication am I on?", "What dose of my antidepressant do I take?"),
            "The user takes 50 mg of sertraline every morning.",
            ("Morning coffee is non-negotiable.", "Do I need a prescription for melatonin?"),
        ),
        P(
            "I'm learning Portuguese with a tutor named Beatriz, twice a week on Zoom.",
            ("Which language am I studying?", "Who is my Portuguese teacher?"),
            "The user is learning Portuguese with a tutor, Beatriz, twice a week on Zoom.",
            (
                "Zoom keeps crashing on my old laptop.",
                "Spanish and Portuguese look similar but sound so different.",
            ),
        ),
        P(
            "My blood type is O negative.",
            ("What blood group am I?",),
            "The user's blood type is O negative.",
            (
                "I donated blood last month, they gave me a cookie.",
                "Negative reviews on that restaurant are mostly about the wait.",
            ),
        ),
        P(
            "The Peru trip is booked: Lima on the 3rd of October, then Cusco and Machu Picchu.",
            ("When do I fly to Lima?", "What's the itinerary for South America?"),
            "The user's Peru trip starts in Lima on 3 October, then Cusco and Machu Picchu.",
            (
                "Machu Picchu tickets sell out months in advance apparently.",
                "Lima has amazing ceviche.",
            ),
            "schedule",
        ),
        P(
            "I climb at the bouldering gym on Karl-Marx-Straße every Friday evening.",
            ("Where do I go climbing?", "When is my weekly bouldering session?"),
            "The user boulders at the gym on Karl-Marx-Straße every Friday evening.",
            ("My forearms are dead after yesterday.", "Friday evenings are my only free time."),
            "schedule",
        ),
        P(
            "My sourdough starter is called Doughlene and I feed it every 12 hours.",
            ("How often do I feed the starter?", "What's the name of my sourdough culture?"),
            "The user's sourdough starter is called Doughlene and is fed every 12 hours.",
            ("My bread came out flat again.", "Is rye flour better for a starter?"),
        ),
        P(
            "I'm on the waiting list for a cardiologist appointment at Charité, probably in March.",
            (
                "When am I seeing the heart specialist?",
                "Which hospital is my cardiology appointment at?",
            ),
            "The user is waiting for a cardiologist appointment at Charité, probably in March.",
            ("My heart rate monitor says my resting rate is 52.", "March is tax season, ugh."),
            "schedule",
        ),
        P(
            "My bike is a 2019 Canyon Endurace, size M.",
            ("What road bike do I ride?", "What frame size is my bicycle?"),
            "The user rides a 2019 Canyon Endurace, size M.",
            (
                "Someone stole the bike seat at the station.",
                "Size M shirts are always too short on me.",
            ),
        ),
        P(
            "I'm afraid of flying, so I prefer trains for anything under eight hours.",
            ("Why do I avoid planes?", "How do I like to travel?"),
            "The user is afraid of flying and prefers trains for trips under eight hours.",
            (
                "The train was 40 minutes late again.",
                "Flying to Lima takes 16 hours with a layover.",
            ),
            "preference",
        ),
    ),
    background_facts=(
        "The user lives in Berlin-Neukölln.",
        "The user works as a UX researcher.",
        "The user prefers metric units.",
        "The user has a cat named Pixel.",
        "The user likes answers with sources.",
        "The user is saving for a new laptop.",
        "The user's favourite author is Ursula K. Le Guin.",
        "The user volunteers at a food bank once a month.",
    ),
    decisions=(
        "Run the Berlin marathon with a 5:40 per km pace plan",
        "Switch to a cheaper phone plan in January",
    ),
    action_items=(
        "Book the Machu Picchu entrance tickets",
        "Send the physiotherapy invoices to the insurance",
    ),
)

RAJ = Persona(
    name="raj",
    planted=(
        P(
            "My bakery's accountant is Sunita Rao, she files the VAT return every quarter.",
            ("Who does my bookkeeping?", "How often is the VAT filed?"),
            "The user's bakery accountant is Sunita Rao; she files VAT quarterly.",
            (
                "VAT on cakes is different from VAT on bread, it's confusing.",
                "The bakery's oven broke again.",
            ),
            "project",
        ),
        P(
            "The bakery opens at 6:30 on weekdays and 8 on weekends.",
            ("What are the shop's opening hours?", "What time do we open on Saturdays?"),
            "The bakery opens at 6:30 on weekdays and 8:00 on weekends.",
            ("Weekend sales were down 10%.", "I wake up at 5 every day, it's brutal."),
            "schedule",
        ),
        P(
            "Our flour supplier is Moulins Dupont, delivery every Tuesday.",
            ("Who supplies our flour?", "When does the flour delivery come?"),
            "The bakery's flour supplier is Moulins Dupont, delivering on Tuesdays.",
            ("Flour prices went up 15% this year.", "Tuesday deliveries are often late."),
            "project",
        ),
        P(
            "The business loan is 45,000 at 6.2% over five years with Triodos Bank.",
            ("What interest rate is on the loan?", "Which bank did we borrow from?"),
            "The bakery has a 45,000 loan at 6.2% over five years with Triodos Bank.",
            (
                "Interest rates might go down next year.",
                "Should I open a second bank account for payroll?",
            ),
            "project",
        ),
        P(
            "We have four employees: Marco, Aisha, Ben and Lucia; Aisha is the head baker.",
            ("Who is our head baker?", "How many people work at the bakery?"),
            "The bakery has four employees (Marco, Aisha, Ben, Lucia); Aisha is head baker.",
            ("Marco called in sick again.", "Hiring a baker is so hard right now."),
            "project",
        ),
        P(
            "The lease on the shop ends in August 2026, with an option to extend five years.",
            ("When does the shop rental contract run out?", "Can we extend the lease?"),
            "The shop lease ends in August 2026 with an option to extend five years.",
            (
                "The shop next door is closing down.",
                "August is slow because everyone's on holiday.",
            ),
            "project",
        ),
        P(
            "Our best seller is the cardamom bun, about 300 a day.",
            (
                "What's our most popular product?",
                "How many cardamom buns do we sell daily?",
            ),
            "The bakery's best seller is the cardamom bun, about 300 a day.",
            ("Cardamom is so expensive now.", "We tried a pistachio croissant, it flopped."),
            "project",
        ),
        P(
            "I'm diabetic (type 2), so I have to watch sugar, ironic for a baker.",
            ("What kind of diabetes do I have?", "Should I be careful with sugar?"),
            "The user has type 2 diabetes and watches their sugar intake.",
            ("Sugar prices jumped again.", "Our sugar-free muffins don't sell."),
        ),
        P(
            "The health inspection is scheduled for the 21st, the inspector is Mr. Keller.",
            (
                "When is the food safety inspection?",
                "Who is the inspector coming to the shop?",
            ),
            "The bakery's health inspection is on the 21st, by inspector Mr. Keller.",
            (
                "The fridge thermometer needs new batteries.",
                "Inspection reports are public online, right?",
            ),
            "schedule",
        ),
        P(
            "We use Square for payments, the fees are 1.75% per transaction.",
            (
                "Which card payment system do we use?",
                "How much do we pay per card transaction?",
            ),
            "The bakery takes payments with Square at 1.75% per transaction.",
            ("Cash payments are down to 20% of sales.", "Should we add a tip option?"),
            "project",
        ),
        P(
            "My son Arjun starts university in Edinburgh in September, studying physics.",
            ("Where is Arjun going to study?", "What subject will my son major in?"),
            "The user's son Arjun starts studying physics at university in Edinburgh in September.",
            (
                "Edinburgh in August is packed because of the festival.",
                "Physics homework at 11pm, send help.",
            ),
        ),
        P(
            "The walk-in freezer is a Foster EP1440L, the service contract number is FS-20931.",
            (
                "What model is our freezer?",
                "What's the service contract number for the freezer?",
            ),
            "The walk-in freezer is a Foster EP1440L, service contract FS-20931.",
            (
                "The freezer alarm went off twice last night.",
                "Is a service contract worth it for small appliances?",
            ),
            "technical",
        ),
        P(
            "Our Instagram account is @rajsbakehouse and it has about 4,200 followers.",
            (
                "What's the bakery's Instagram handle?",
                "How many followers do we have on social media?",
            ),
            "The bakery's Instagram is @rajsbakehouse with about 4,200 followers.",
            ("Instagram's algorithm hates bakeries apparently.", "Should we do a giveaway?"),
            "project",
        ),
    ),
    background_facts=(
        "The user owns a bakery called Raj's Bakehouse.",
        "The user prefers answers without jargon.",
        "The user's bakery is in Leeds.",
        "The user writes the weekly staff rota on Sundays.",
        "The user wants to open a second shop within three years.",
        "The user's daughter helps at the bakery on Saturdays.",
        "The user uses Xero for accounting.",
        "The user sells sourdough loaves at the Sunday market.",
    ),
    decisions=(
        "Raise the price of a loaf by 20 pence from April",
        "Stop opening on bank holiday Mondays",
    ),
    action_items=(
        "Renew the food hygiene certificate for the new staff",
        "Get a quote for a second deck oven",
    ),
)

PERSONAS = (MAYA, TOM, LENA, RAJ)

ACKS = (
    "Noted.",
    "Got it, I'll keep that in mind.",
    "Thanks for letting me know.",
    "Understood. Anything you want me to do with that?",
    "OK, good to know!",
    "Sure, noted for later.",
)


# -- the generated set ------------------------------------------------------------------------


@dataclass
class Msg:
    role: str
    content: str
    seconds_ago: int = 0
    planted: int | None = None  # index of the planted fact it states, within its persona


@dataclass
class Conv:
    title: str
    messages: list[Msg] = field(default_factory=list)


@dataclass
class FactRow:
    text: str
    category: str
    importance: float
    seconds_ago: int
    planted: int | None = None  # the planted fact it records (its source message), or None


@dataclass
class UserSet:
    persona: Persona
    conversations: list[Conv]
    facts: list[FactRow]
    decisions: list[tuple[str, int]]  # (text, seconds ago)
    action_items: list[tuple[str, int]]


@dataclass
class Question:
    user: int  # index into Dataset.users
    planted: int  # index of the planted fact
    text: str
    statement: str
    relevant: set[tuple[str, int]] = field(default_factory=set)  # filled once stored


@dataclass
class Dataset:
    users: list[UserSet]
    questions: list[Question]

    @property
    def message_count(self) -> int:
        return sum(len(c.messages) for u in self.users for c in u.conversations)


def _approx_tokens(text: str) -> int:
    # corpus.chat_messages only sizes its sentence pool with this; exact counts are not needed.
    return max(1, round(len(text) / 4))


def build(
    *, distractors_per_user: int = 3000, conversations_per_user: int = 8, seed: int = 4242
) -> Dataset:
    """The labelled set: for each persona, its conversations (distractor chat with the planted
    statements and near misses inserted), its Fact rows, and every question."""
    users: list[UserSet] = []
    questions: list[Question] = []
    for index, persona in enumerate(PERSONAS):
        rng = random.Random(seed * 100 + index)
        chat = chat_messages(distractors_per_user, _approx_tokens, seed=seed * 1000 + index)
        # Split the chat into conversations of random lengths (whole user/assistant pairs).
        pairs = [chat[i : i + 2] for i in range(0, len(chat) - 1, 2)]
        cuts = sorted(rng.sample(range(1, len(pairs)), conversations_per_user - 1))
        bounds = [0, *cuts, len(pairs)]
        convs = [
            Conv(
                title=f"{persona.name} chat {c + 1}",
                messages=[
                    Msg(role, text)
                    for pair in pairs[bounds[c] : bounds[c + 1]]
                    for role, text in pair
                ],
            )
            for c in range(conversations_per_user)
        ]
        # Insert planted statements and near misses (user turn + acknowledgement) at random
        # pair boundaries of random conversations.
        inserts: list[tuple[str, int | None]] = [
            (p.statement, i) for i, p in enumerate(persona.planted)
        ]
        inserts += [(text, None) for p in persona.planted for text in p.near_misses]
        rng.shuffle(inserts)
        for text, planted in inserts:
            conv = rng.choice(convs)
            at = 2 * rng.randint(0, len(conv.messages) // 2)
            conv.messages[at:at] = [
                Msg("user", text, planted=planted),
                Msg("assistant", rng.choice(ACKS)),
            ]
        # Timestamps: each conversation starts on a random day within DAYS, messages 30-90 s
        # apart, never in the future.
        for conv in convs:
            span = sum(rng.randint(30, 90) for _ in conv.messages)
            start = rng.randint(span, DAYS * 86400)
            for msg in conv.messages:
                msg.seconds_ago = start
                start = max(start - rng.randint(30, 90), 0)
        stated_at = {
            m.planted: m.seconds_ago for c in convs for m in c.messages if m.planted is not None
        }
        facts = [
            FactRow(p.fact, p.category, round(rng.uniform(0.4, 0.9), 2), stated_at[i], i)
            for i, p in enumerate(persona.planted)
            if i % 2 == 0
        ]
        facts += [
            FactRow(text, "other", round(rng.uniform(0.4, 0.9), 2), rng.randint(0, DAYS * 86400))
            for text in persona.background_facts
        ]
        decisions = [(text, rng.randint(0, DAYS * 86400)) for text in persona.decisions]
        actions = [(text, rng.randint(0, DAYS * 86400)) for text in persona.action_items]
        users.append(UserSet(persona, convs, facts, decisions, actions))
        for i, planted in enumerate(persona.planted):
            questions += [Question(index, i, q, planted.statement) for q in planted.questions]
    return Dataset(users=users, questions=questions)
