"""The authored lineages of the recall diagnostic corpus (fabricated people, places and facts).

A *lineage* is one fact template and one query template; each of its rows fills both with its
own values and becomes one information need. Rows never share an answer: the query of a row
names something only its own facts say (often in different words), so every need's required
evidence is unambiguous even though all 400 needs live in one owner's bank.

Slots in ``{braces}`` are filled from the row. A row may add ``d``: extra distractors as
``(kind, subject, statement)`` or ``(kind, subject, statement, person)``; ``near`` is the
owner's own valid but wrong fact (a hard semantic neighbour), ``other`` is another person's
fact (attribution ``person:<them>``), ``stale`` an older still-active version.

Everything here is invented. This module holds data only; ``make_diagnostic`` turns it into
the memory-bank@1 document and the needs file, and must stay the only reader.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

ATTR = "attributes_resources"
PREF = "preferences_constraints"
REL = "relationships"
GOAL = "goals_projects"
DEC = "decisions_rationale"
ROUT = "routines"
TEMP = "temporal_updates"
MULTI = "multi_fact_ambiguity_unknowns"
FAMILIES = (ATTR, PREF, REL, GOAL, DEC, ROUT, TEMP, MULTI)


@dataclass(frozen=True)
class Fact:
    """One memory a need's history holds. ``role``: evidence | distractor | invalid."""

    role: str
    belief_type: str
    subject: str
    statement: str
    when: str = "old"  # old | v2 | new: where on the need's timeline it was said
    negated: bool = False
    status: str = "active"
    expires: Optional[str] = None  # "new" (when the newer fact arrived) or a slot/ISO date
    by: Optional[str] = None  # another person's fact: their name (slot or literal)
    sensitivity: str = "internal"


@dataclass(frozen=True)
class Lineage:
    name: str
    family: str
    kind: str
    facts: tuple[Fact, ...]
    query: str
    rows: tuple[dict, ...]
    historical: bool = False  # the query asks about the past: as_of lies between versions
    notes: str = ""


def E(belief_type: str, subject: str, statement: str, **kw) -> Fact:
    return Fact("evidence", belief_type, subject, statement, **kw)


def D(belief_type: str, subject: str, statement: str, **kw) -> Fact:
    kw.setdefault("when", "new")
    return Fact("distractor", belief_type, subject, statement, **kw)


def X(belief_type: str, subject: str, statement: str, **kw) -> Fact:
    return Fact("invalid", belief_type, subject, statement, **kw)


LINEAGES: list[Lineage] = []

# Held-out lineages, chosen by hand so that every family's holdout mixes paraphrased, lexical,
# negated or versioned needs (about 37% of the needs). Everything else is development.
HOLDOUT = frozenset({
    "attr-body-measure", "attr-account-email", "attr-home-facts",
    "pref-health-constraint", "pref-taste-media", "pref-gift-wishes",
    "rel-role", "rel-birthday", "rel-pets",
    "goal-collaborator", "goal-deadline", "goal-why",
    "dec-not-renew", "dec-purchase-where", "dec-house-rule",
    "rout-health", "rout-with-person", "rout-stopped",
    "temp-address-current", "temp-phone-history", "temp-implicit-update",
    "multi-same-name", "multi-hop", "multi-unknown-retracted",
})


def lineage(name, family, kind, facts, query, rows, **kw) -> None:
    LINEAGES.append(Lineage(name, family, kind, tuple(facts), query, tuple(rows), **kw))


# =============================================================================================
# 1. attributes / resources
# =============================================================================================

lineage("attr-stored-item", ATTR, "paraphrase",
        [E("resource", "{item}", "The owner keeps {what} in {place}.", sensitivity="sensitive")],
        "Where did I put {q}?", [
            dict(item="passport", what="their passport", q="my travel ID",
                 place="the blue accordion file on the study bookshelf",
                 d=[("other", "passport", "Kees said he keeps his passport in the kitchen drawer.", "Kees Bakker")]),
            dict(item="spare shed key", what="the spare allotment shed key", q="the duplicate for the garden hut lock",
                 place="a tin behind the compost bins"),
            dict(item="boiler warranty", what="the boiler warranty papers", q="the heater guarantee documents",
                 place="a red ring binder in the hallway cupboard",
                 d=[("near", "dishwasher manual", "The owner threw away the dishwasher manual after downloading a PDF copy.")]),
            dict(item="vaccination booklet", what="their vaccination booklet", q="my vaccination record",
                 place="the zip pouch inside the travel backpack"),
            dict(item="backup drive", what="the photo backup hard drive", q="the external disk with all the family pictures",
                 place="the fireproof safe in the attic"),
            dict(item="flat deed", what="the title deed for the flat", q="the ownership paperwork for my apartment",
                 place="a sealed envelope at the notary's office in Delft"),
            dict(item="winter tyres", what="the hatchback's winter tyres", q="my winter tyres",
                 place="a rented storage unit on Vaartweg, number 14"),
        ])

lineage("attr-language-level", ATTR, "lexical",
        [E("attribute", "{lang}", "The owner speaks {lang} at {level} level, picked up {how}.", sensitivity="public")],
        "How well do I speak {lang}?", [
            dict(lang="Greek", level="a basic tourist", how="on three summers in Crete"),
            dict(lang="Korean", level="an intermediate", how="through a weekly evening class since 2020"),
            dict(lang="Hungarian", level="a near-native", how="from their grandmother in Debrecen"),
            dict(lang="Catalan", level="a reading-only", how="while doing an Erasmus semester in Girona"),
            dict(lang="Norwegian", level="a conversational", how="during two years of work in Stavanger"),
            dict(lang="Welsh", level="an absolute beginner's", how="from a phone app last winter"),
        ])

lineage("attr-body-measure", ATTR, "paraphrase",
        [E("attribute", "{subject}", "{statement}", sensitivity="sensitive")],
        "{q}", [
            dict(subject="shoe size", statement="The owner wears EU size 43 in sneakers.",
                 q="What is my shoe size?"),
            dict(subject="blood group", statement="The owner's blood group is O negative.",
                 q="Which transfusion category am I?"),
            dict(subject="handedness", statement="The owner is left-handed.",
                 q="Should I get scissors made for southpaws?"),
            dict(subject="eyesight", statement="The owner is short-sighted with a prescription of minus 2.5 in both eyes.",
                 q="How strong are my glasses lenses?"),
            dict(subject="height", statement="The owner is 1.86 metres tall.",
                 q="What is my stature, for choosing a bike frame?"),
            dict(subject="ring size", statement="The owner's ring size is 19 millimetres, which is 59 in European sizing.",
                 q="What band measurement fits my finger?"),
            dict(subject="collar", statement="The owner wears medium shirts with a 41 cm collar.",
                 q="What neck width should a formal top I buy have?",
                 d=[("other", "collar", "Ruth said her father wears a 44 cm collar.", "Ruth Meijer")]),
        ])

lineage("attr-account-email", ATTR, "lexical",
        [E("resource", "{service} account", "The owner's {service} account is registered to {email}.", sensitivity="sensitive")],
        "Which email address is my {service} account under?", [
            dict(service="public library", email="reader.mailbox@fastmail.example"),
            dict(service="energy supplier", email="home.bills@proton.example"),
            dict(service="KLM Flying Blue", email="trips.owner@gmail.example"),
            dict(service="tax office", email="official.owner@outlook.example"),
            dict(service="school parent portal", email="family.hub@gmail.example"),
            dict(service="GitHub", email="dev.owner@users.example"),
        ])

lineage("attr-lent-out", ATTR, "paraphrase",
        [E("resource", "{item}", "The owner lent {item_s} to {name} in {month}.")],
        "Who has my {q} at the moment?", [
            dict(item="camping stove", item_s="the camping stove", name="Bas Jonker", month="April",
                 q="portable burner for outdoor trips"),
            dict(item="cordless drill", item_s="the cordless drill", name="Ilona Varga", month="February",
                 q="battery-powered screw driver"),
            dict(item="cargo trailer", item_s="the bicycle cargo trailer", name="Pim de Graaf", month="June",
                 q="kid carrier that hitches behind a bike"),
            dict(item="projector", item_s="the mini projector", name="Selin Kaya", month="March",
                 q="beamer for movie nights"),
            dict(item="sewing kit", item_s="the sewing machine", name="Mirte Dekker", month="January",
                 q="stitching appliance"),
            dict(item="snowboard", item_s="the snowboard and bindings", name="Jurre Smit", month="December",
                 q="winter sports board",
                 d=[("other", "snowboard", "Jurre said he bought his own snowboard boots.", "Jurre Smit")]),
        ])

lineage("attr-qualification", ATTR, "paraphrase",
        [E("attribute", "{subject}", "The owner holds {cred}.", sensitivity="internal")],
        "{q}", [
            dict(subject="diving certificate", cred="a PADI Advanced Open Water diving certificate",
                 q="Am I qualified to go underwater with scuba gear?"),
            dict(subject="first aid", cred="a first-aid certificate from the Red Cross, renewed in 2022",
                 q="Do I have a first-aid certificate?"),
            dict(subject="sailing licence", cred="a CWO II sailing licence for small yachts",
                 q="Am I allowed to skipper a boat?"),
            dict(subject="food hygiene", cred="a food-hygiene certificate from volunteering at the community kitchen",
                 q="Am I cleared to handle meals at a shelter?"),
            dict(subject="degree", cred="a bachelor's degree in civil engineering from TU Delft",
                 q="What did I study at university?"),
            dict(subject="forklift", cred="a forklift operator licence from a summer warehouse job",
                 q="Can I drive the pallet truck in the depot?"),
        ])

lineage("attr-device-model", ATTR, "lexical",
        [E("resource", "{device}", "The owner's {device} is {model}, bought in {year}.", sensitivity="public")],
        "What model is my {device}?", [
            dict(device="laptop", model="a 14-inch ThinkPad X1 Carbon", year="2022"),
            dict(device="e-reader", model="a Kobo Libra 2", year="2021"),
            dict(device="coffee grinder", model="a Baratza Encore", year="2019"),
            dict(device="road bike", model="a Canyon Endurace CF 7", year="2023"),
            dict(device="smartwatch", model="a Garmin Forerunner 255", year="2022"),
            dict(device="camera", model="a Fujifilm X-T30 with a 35 mm lens", year="2020"),
            dict(device="router", model="a Fritz!Box 7590", year="2021"),
        ])

lineage("attr-home-facts", ATTR, "paraphrase",
        [E("attribute", "{subject}", "{statement}", sensitivity="internal")],
        "{q}", [
            dict(subject="flat access", statement="The owner's flat is on the fourth floor of a building without an elevator.",
                 q="Will the movers have to haul furniture up stairs at my place?"),
            dict(subject="car", statement="The owner's car is a grey 2017 Skoda Octavia estate.",
                 q="What car do I drive?"),
            dict(subject="internet", statement="The owner's home internet is a 500 Mbit fibre line from Odido.",
                 q="How fast is my broadband?"),
            dict(subject="parking permit", statement="The owner's parking permit covers zone C in the city centre.",
                 q="Where may I leave my vehicle on the street?"),
            dict(subject="balcony", statement="The owner's apartment has a small balcony that gets sun all afternoon.",
                 q="Do my outdoor plants get light later in the day?"),
        ])

# =============================================================================================
# 2. preferences / constraints
# =============================================================================================

lineage("pref-food-avoid", PREF, "negation",
        [E("preference", "{subject}", "The owner does not eat {food}.", negated=True)],
        "{q}", [
            dict(subject="coriander", food="coriander; to them it tastes like soap",
                 q="Which herb should be left out when cooking for me?",
                 d=[("other", "coriander", "Ruth said she loves coriander in everything.", "Ruth Meijer")]),
            dict(subject="mushrooms", food="mushrooms of any kind", q="Is it okay to put mushrooms on a pizza for me?"),
            dict(subject="pork", food="pork, for religious reasons", q="Would a ham sandwich be a problem for me?"),
            dict(subject="raw fish", food="raw fish", q="Should I avoid the sushi place for my birthday dinner?",
                 d=[("near", "fish", "The owner enjoys grilled mackerel at the beach bar in Scheveningen.")]),
            dict(subject="tree nuts", food="tree nuts such as walnuts and cashews", q="Is pecan pie safe for me?"),
            dict(subject="spicy food", food="anything spicier than mild", q="How spicy can my food be?"),
        ])

lineage("pref-comfort", PREF, "paraphrase",
        [E("preference", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="flight seats", statement="The owner prefers aisle seats on flights.",
                 q="Which seat do I prefer on flights?"),
            dict(subject="hotel rooms", statement="The owner prefers hotel rooms on a high floor away from the lift.",
                 q="What should I request at check-in?"),
            dict(subject="sleep", statement="The owner likes a firm pillow and a cool bedroom around 17 degrees.",
                 q="How do I like my setup for the night?"),
            dict(subject="coffee", statement="The owner drinks their coffee black with no sugar.",
                 q="How do I take my espresso?"),
            dict(subject="video calls", statement="The owner prefers to keep the camera off on calls before 10 am.",
                 q="Should I show my face in early meetings?"),
            dict(subject="books", statement="The owner prefers paperback books over e-readers.",
                 q="Should I get the Kindle version or a printed copy of that novel?"),
            dict(subject="restaurants", statement="The owner prefers window tables in quiet restaurants.",
                 q="What table do I like in restaurants?"),
        ])

lineage("pref-schedule-limit", PREF, "paraphrase",
        [E("constraint", "{subject}", "{statement}", negated=True)],
        "{q}", [
            dict(subject="morning meetings", statement="The owner cannot take meetings before 9:30 on weekdays because of the school run.",
                 q="Can someone book me for an 8 am call?"),
            dict(subject="Friday afternoons", statement="The owner keeps Friday afternoons free of meetings for deep work.",
                 q="Is a 3 pm slot at the end of the week okay for me?"),
            dict(subject="overnight flights", statement="The owner will not take overnight red-eye flights.",
                 q="Should I take the late-night plane to New York?"),
            dict(subject="motorways", statement="The owner refuses to drive on motorways since an accident in 2021.",
                 q="Can I take the highway to Antwerp?"),
            dict(subject="weekend work", statement="The owner does not answer work messages on Sundays.",
                 q="Will I reply to my boss at the weekend?"),
            dict(subject="school holidays", statement="The owner cannot travel for work during the school summer holidays.",
                 q="Can I go on a business trip in late July?"),
        ])

lineage("pref-budget-cap", PREF, "lexical",
        [E("constraint", "budget for {thing}", "The owner's maximum budget for {thing} is {amount} euros.", sensitivity="sensitive")],
        "How much can I spend on {thing}?", [
            dict(thing="a new mattress", amount="900"),
            dict(thing="the summer holiday in Brittany", amount="2,400"),
            dict(thing="a second-hand piano", amount="1,500"),
            dict(thing="the garden fence", amount="650"),
            dict(thing="Christmas presents", amount="300"),
            dict(thing="a winter coat", amount="250"),
        ])

lineage("pref-health-constraint", PREF, "paraphrase",
        [E("constraint", "{subject}", "{statement}", sensitivity="sensitive")],
        "{q}", [
            dict(subject="lactose", statement="The owner is lactose intolerant and uses oat milk.",
                 q="Is a cheese fondue a good idea for me?"),
            dict(subject="coeliac", statement="The owner has coeliac disease and cannot have gluten.",
                 q="Can I eat regular bread?"),
            dict(subject="grapefruit", statement="The owner must avoid grapefruit because of their blood-pressure medication.",
                 q="Any fruit I must not combine with my pills?"),
            dict(subject="left knee", statement="The owner has a bad left knee and should not run on hard surfaces.",
                 q="What should I know about my bad knee when exercising?"),
            dict(subject="heights", statement="The owner is afraid of heights and avoids glass-floored viewpoints.",
                 q="Would a skywalk attraction be fun for me?"),
            dict(subject="seasickness", statement="The owner gets seasick on small boats.",
                 q="Should I book the whale-watching trip in a dinghy?"),
        ])

lineage("pref-taste-media", PREF, "lexical",
        [E("preference", "{subject}", "{statement}", sensitivity="public")],
        "{q}", [
            dict(subject="crime drama", statement="The owner's favourite kind of television is Scandinavian crime drama.",
                 q="What kind of crime series would I enjoy?"),
            dict(subject="podcasts", statement="The owner listens to history podcasts while doing the dishes.",
                 q="What podcasts do I like?"),
            dict(subject="board games", statement="The owner loves cooperative board games like Pandemic and hates Monopoly.",
                 q="Which board games should I bring to game night?"),
            dict(subject="museums", statement="The owner prefers small design museums over big art museums.",
                 q="Which museums do I like visiting?"),
            dict(subject="concerts", statement="The owner enjoys seated jazz concerts but dislikes festivals.",
                 q="Would I like a jazz night or a festival?"),
            dict(subject="fiction", statement="The owner reads mostly science fiction novels by women authors.",
                 q="What novels should I recommend myself?"),
        ])

lineage("pref-contact-channel", PREF, "paraphrase",
        [E("preference", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="reminders", statement="The owner wants reminders by text message, never by email.",
                 q="How should you send me reminders?"),
            dict(subject="phone calls", statement="The owner dislikes unannounced phone calls and prefers voice notes.",
                 q="Is it okay to ring me without warning?"),
            dict(subject="newsletters", statement="The owner unsubscribes from every marketing mailing list.",
                 q="Do I want promotional emails from shops?"),
            dict(subject="summaries", statement="The owner likes answers as short bullet points, not long paragraphs.",
                 q="What format should your replies to me have?"),
            dict(subject="language", statement="The owner wants the assistant to reply in English even when they write Dutch.",
                 q="Which tongue should you answer me in?"),
            dict(subject="early notifications", statement="The owner does not want notifications before 7 am.",
                 q="Is it fine to ping me at dawn?"),
            dict(subject="calendar", statement="The owner wants every appointment added to the shared family calendar.",
                 q="Where should you put my bookings so the household sees them?"),
        ])

lineage("pref-gift-wishes", PREF, "paraphrase",
        [E("preference", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="birthday presents", statement="The owner asks friends for no birthday presents, only a card.",
                 q="Should people buy me something when I turn a year older?",
                 d=[("other", "birthday presents", "Ilona said she would love a plant for her birthday.", "Ilona Varga")]),
            dict(subject="flowers", statement="The owner finds cut flowers wasteful and prefers potted plants.",
                 q="Is a bouquet a nice thing to give me?"),
            dict(subject="surprise parties", statement="The owner hates surprise parties.",
                 q="Should my friends secretly organise a celebration for me?"),
            dict(subject="perfume", statement="The owner is sensitive to fragrances and never wears scent.",
                 q="Would cologne make a good present for me?"),
            dict(subject="chocolate", statement="The owner loves dark chocolate with sea salt.",
                 q="What sweet treat would delight me?"),
            dict(subject="experiences", statement="The owner prefers experiences such as concert tickets over things.",
                 q="Should people give me objects or outings?"),
        ])

# =============================================================================================
# 3. relationships
# =============================================================================================

lineage("rel-kin-city", REL, "paraphrase",
        [E("relationship", "{name}", "{name}, the owner's {rel}, lives in {city}.")],
        "Which city is my {q} based in?", [
            dict(name="Ana Ribeiro", rel="sister", city="Porto", q="sibling",
                 d=[("near", "Marta Ribeiro", "Marta, the owner's sister-in-law, lives in Braga."),
                    ("other", "family", "Bruno said his sister moved to Vigo.", "Bruno Alves")]),
            dict(name="Tomas Berger", rel="godfather", city="Graz", q="baptism sponsor"),
            dict(name="Helga Meijer", rel="mother-in-law", city="Aarhus", q="spouse's mum"),
            dict(name="Ruben Ribeiro", rel="nephew", city="Coimbra", q="sister's boy"),
            dict(name="Wim Hoekstra", rel="grandfather", city="Leeuwarden", q="mum's dad"),
            dict(name="Lise Lund", rel="stepdaughter", city="Bergen", q="partner's girl from her first marriage"),
            dict(name="Pieter Hoekstra", rel="cousin", city="Maastricht", q="uncle's son"),
        ])

lineage("rel-how-met", REL, "lexical",
        [E("relationship", "{name}", "The owner met {name} {how} in {year}.")],
        "How do I know {name}?", [
            dict(name="Ilse Brouwer", how="at a pottery workshop", year="2016"),
            dict(name="Daan Mulder", how="on the first day of university", year="2009"),
            dict(name="Yara Haddad", how="through a running club", year="2019"),
            dict(name="Gijs Verhoef", how="while volunteering at a refugee centre", year="2015"),
            dict(name="Fenna Post", how="on a night train to Vienna", year="2018"),
            dict(name="Otto Wagenaar", how="at a friend's wedding in Ghent", year="2021"),
        ])

lineage("rel-role", REL, "paraphrase",
        [E("relationship", "{name}", "{name} is the owner's {role}.")],
        "{q}", [
            dict(name="Dr. Imke Okafor", role="general practitioner", q="Who should I call when I feel ill and need a physician?"),
            dict(name="Sven Aalto", role="personal trainer", q="Who coaches my workouts at the gym?"),
            dict(name="Mariska Veen", role="landlady", q="Who is my landlady?"),
            dict(name="Farid Haddad", role="line manager at work", q="Who is my boss?",
                 d=[("other", "manager", "Kees said his manager is called Karin.", "Kees Bakker")]),
            dict(name="Lotte Brink", role="tax adviser", q="Who handles my yearly returns with the revenue office?"),
            dict(name="Jasper Kok", role="plumber", q="Who fixes leaks and pipes at my place?"),
            dict(name="Noor El Idrissi", role="babysitter for Milo", q="Who watches my kid on date nights?"),
        ])

lineage("rel-birthday", REL, "lexical",
        [E("relationship", "{name}", "{name}'s birthday is on {date}.")],
        "When is {name}'s birthday?", [
            dict(name="Hanneke Vos", date="14 February"),
            dict(name="Mehmet Yilmaz", date="3 August"),
            dict(name="Sofie Claes", date="29 November"),
            dict(name="Levi Peters", date="7 May"),
            dict(name="Annemijn Bos", date="21 October"),
            dict(name="Quinten Maas", date="2 January"),
        ])

lineage("rel-estranged", REL, "negation",
        [E("relationship", "{name}", "The owner is no longer in touch with {name} after {event}.", negated=True, sensitivity="restricted")],
        "Should I invite {name} to my party?", [
            dict(name="Roel Kuipers", event="a falling-out over a loan"),
            dict(name="Esther Dijkman", event="she moved abroad and stopped replying"),
            dict(name="Thijs van Dam", event="an argument at a wedding"),
            dict(name="Nadia Benali", event="the band broke up"),
            dict(name="Koen Prins", event="a dispute about the shared flat's deposit"),
        ])

lineage("rel-their-needs", REL, "paraphrase",
        [E("relationship", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="Ruth Meijer", statement="Ruth, the owner's partner, is vegetarian.",
                 q="What kind of dishes can my girlfriend eat?"),
            dict(subject="Milo", statement="The owner's son Milo is allergic to cats.",
                 q="Can Milo visit a house with a kitten?"),
            dict(subject="mother", statement="The owner's mother uses a wheelchair.",
                 q="Does the restaurant for mum's birthday need step-free access?"),
            dict(subject="Kees Bakker", statement="The owner's best friend Kees supports Feyenoord.",
                 q="Which football club does my closest mate follow?",
                 d=[("other", "football", "Kees said his brother supports Ajax.", "Kees Bakker")]),
            dict(subject="father", statement="The owner's father is hard of hearing in his right ear.",
                 q="Which side should I sit on when talking to dad?"),
            dict(subject="Ilona Varga", statement="The owner's neighbour Ilona waters the plants when the owner travels.",
                 q="Who looks after the greenery while I'm away?"),
        ])

lineage("rel-team-role", REL, "lexical",
        [E("relationship", "{name}", "{name} works with the owner on {team} as the {role}.")],
        "Who is the {role} on {team}?", [
            dict(name="Bram Hendriks", team="the payments migration", role="tech lead"),
            dict(name="Chloe Martin", team="the onboarding redesign", role="UX researcher"),
            dict(name="Joost Visser", team="the school fundraiser", role="treasurer"),
            dict(name="Amira Saleh", team="the street festival committee", role="volunteer coordinator"),
            dict(name="Wouter Boer", team="the data warehouse project", role="product owner"),
            dict(name="Emma Kramer", team="the choir board", role="secretary"),
        ])

lineage("rel-pets", REL, "paraphrase",
        [E("relationship", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="dog", statement="The owner's dog is called Bruno, a four-year-old beagle.",
                 q="What's my pup's name?"),
            dict(subject="cat", statement="The owner's cat Saffie is fourteen and has kidney problems.",
                 q="How old is my cat?"),
            dict(subject="tortoise", statement="The owner keeps a Greek tortoise named Henk in the garden.",
                 q="What reptile lives in my backyard?"),
            dict(subject="horse", statement="The owner shares a horse called Storm at a stable in Lage Vuursche.",
                 q="Where is the animal I ride kept?"),
            dict(subject="fish", statement="The owner's aquarium holds six neon tetras and a catfish.",
                 q="What fish are in my aquarium?"),
            dict(subject="vet", statement="The owner's animals go to the Dierenkliniek Zuilen vet practice.",
                 q="Which vet do my animals go to?"),
            dict(subject="dog sitter", statement="When the owner travels, Bruno stays with a dog sitter named Vera Smits.",
                 q="Who minds my beagle during holidays?"),
        ])

# =============================================================================================
# 4. goals / projects
# =============================================================================================

lineage("goal-target", GOAL, "paraphrase",
        [E("goal", "{subject}", "The owner wants to {goal}.")],
        "{q}", [
            dict(subject="marathon", goal="finish a marathon in under four hours by October",
                 q="What is my marathon goal?"),
            dict(subject="house deposit", goal="save 15,000 euros for a house deposit by 2026",
                 q="How much am I putting aside for buying a home?"),
            dict(subject="piano", goal="learn to play the Gymnopedies by Satie",
                 q="What musical ambition do I have?"),
            dict(subject="weight", goal="lose eight kilos before the wedding in June",
                 q="How much weight am I hoping to shed?"),
            dict(subject="provinces", goal="visit all twelve Dutch provinces by bicycle",
                 q="What's my plan for the Dutch provinces?"),
            dict(subject="reading", goal="read one non-fiction book every month",
                 q="How many factual titles do I plan to get through each year?"),
            dict(subject="promotion", goal="be promoted to senior engineer by next spring",
                 q="What career step am I aiming for?"),
        ])

lineage("goal-project-next", GOAL, "lexical",
        [E("project", "{project}", "The owner's {project} is in the {phase} phase; the next step is {next}.")],
        "What is the next step for my {project}?", [
            dict(project="kitchen renovation", phase="design", next="choosing the worktop material"),
            dict(project="family cookbook", phase="writing", next="collecting aunt Greet's recipes"),
            dict(project="garden pond", phase="digging", next="ordering the pond liner"),
            dict(project="allotment greenhouse", phase="planning", next="getting a permit from the allotment board"),
            dict(project="website for the choir", phase="testing", next="moving the domain to the new host"),
            dict(project="van conversion", phase="insulation", next="installing the roof fan"),
            dict(project="photo archive", phase="scanning", next="tagging the 1990s slides"),
        ])

lineage("goal-collaborator", GOAL, "paraphrase",
        [E("project", "{subject}", "The owner is {doing} with {name}.")],
        "Who am I {q}?", [
            dict(subject="podcast", doing="recording a podcast about urban cycling", name="Hugo Verbeek",
                 q="making the audio show about bikes in cities with"),
            dict(subject="board game", doing="designing a board game about beekeeping", name="Loes Timmer",
                 q="creating the tabletop game on honey and hives with"),
            dict(subject="mural", doing="painting a mural for the primary school", name="Ayoub Tahiri",
                 q="decorating the wall at my children's school together with"),
            dict(subject="open-source library", doing="maintaining an open-source date-parsing library", name="Greta Holm",
                 q="co-running that free software package for calendar strings with"),
            dict(subject="community garden", doing="setting up a community garden on the old parking lot", name="Sanne Willems",
                 q="turning the former car park into shared vegetable beds with"),
            dict(subject="short film", doing="shooting a short film about the harbour", name="Victor Lambert",
                 q="making that little movie about the docks with"),
        ])

lineage("goal-abandoned", GOAL, "negation",
        [E("goal", "{subject}", "The owner gave up on {goal} in {year} because {why}.", negated=True)],
        "{q}", [
            dict(subject="cello", goal="learning the cello", year="2022", why="of a wrist injury",
                 q="Am I still learning the cello?"),
            dict(subject="triathlon", goal="training for a triathlon", year="2021", why="open-water swimming scared them",
                 q="Is the swim-bike-run race still on my agenda?"),
            dict(subject="thesis", goal="the PhD", year="2017", why="funding ran out",
                 q="Did I ever finish my doctorate?"),
            dict(subject="veganism", goal="a fully vegan diet", year="2020", why="it was hard with the kids",
                 q="Do I still avoid all animal products?"),
            dict(subject="novel", goal="writing the detective novel", year="2023", why="work got too busy",
                 q="How is my crime fiction manuscript coming along?"),
            dict(subject="beekeeping", goal="beekeeping", year="2019", why="a neighbour complained about the hives",
                 q="Am I still into beekeeping?"),
        ])

lineage("goal-deadline", GOAL, "lexical",
        [E("project", "{project}", "The deadline for the owner's {project} is {date}.")],
        "When is my {project} due?", [
            dict(project="grant application to the arts fund", date="15 March"),
            dict(project="conference talk proposal", date="30 April"),
            dict(project="bathroom tiling", date="the end of August"),
            dict(project="annual report for the housing cooperative", date="1 June"),
            dict(project="passport renewal", date="9 September"),
            dict(project="quilt for the baby shower", date="12 July"),
        ])

lineage("goal-someday", GOAL, "paraphrase",
        [E("goal", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="bakery", statement="The owner dreams of opening a small bakery in the countryside one day.",
                 q="Where would I like to open a bakery?"),
            dict(subject="sabbatical", statement="The owner hopes to take a six-month sabbatical to sail around the Baltic.",
                 q="What long break from my job am I planning?"),
            dict(subject="Mongolia", statement="The owner wants to ride horses across Mongolia before turning fifty.",
                 q="Which adventure on the steppe is on my bucket list?"),
            dict(subject="tiny house", statement="The owner would like to build a tiny house on wheels.",
                 q="What kind of home do I imagine living in eventually?"),
            dict(subject="mentoring", statement="The owner wants to mentor young women entering engineering.",
                 q="How do I hope to support girls going into technical careers?"),
            dict(subject="orchestra", statement="The owner hopes to play violin in an amateur orchestra again.",
                 q="Which ensemble would I love to rejoin?"),
        ])

lineage("goal-course", GOAL, "paraphrase",
        [E("project", "{subject}", "The owner is taking {course}.")],
        "{q}", [
            dict(subject="furniture restoration", course="an evening course in furniture restoration",
                 q="What furniture course am I taking?"),
            dict(subject="sign language", course="a Dutch Sign Language course on Saturday mornings",
                 q="How am I learning to talk with deaf people?"),
            dict(subject="data science", course="an online certificate in machine learning from Coursera",
                 q="Which AI training am I doing on the web?"),
            dict(subject="welding", course="a beginners' welding class at the maker space",
                 q="What metalworking skill am I picking up?"),
            dict(subject="bread", course="a sourdough masterclass at a bakery in Haarlem",
                 q="What baking workshop did I sign up for?"),
            dict(subject="driving", course="motorcycle lessons for an A2 licence",
                 q="What am I training to ride on the road?"),
        ])

lineage("goal-why", GOAL, "paraphrase",
        [E("goal", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="Spanish exam", statement="The owner is studying for the DELE exam because they plan to move to Valencia.",
                 q="Why am I preparing for that language test?"),
            dict(subject="savings", statement="The owner is saving money to pay for Milo's orthodontist.",
                 q="What am I putting money aside for, regarding my son's teeth?"),
            dict(subject="running", statement="The owner started running to lower their cholesterol.",
                 q="What health reason got me into jogging?"),
            dict(subject="solar panels", statement="The owner wants solar panels to cut the electricity bill in half.",
                 q="Why do I want photovoltaics on my roof?"),
            dict(subject="certification", statement="The owner is getting an AWS certification to switch to a cloud role.",
                 q="Why am I studying for that Amazon exam?"),
            dict(subject="decluttering", statement="The owner is decluttering the attic so that their mother can move in.",
                 q="Why am I clearing out the loft?"),
        ])

# =============================================================================================
# 5. decisions / rationale
# =============================================================================================

lineage("dec-chose-because", DEC, "paraphrase",
        [E("decision", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="bookshelf", statement="The owner picked the walnut finish for the bookshelf because oak looked too pale.",
                 q="What made me decide against the lighter wood for the shelving?"),
            dict(subject="heating", statement="The owner chose a heat pump over a new gas boiler because of the subsidy and lower emissions.",
                 q="Why did I choose a heat pump?"),
            dict(subject="housing", statement="The owner decided to rent in Utrecht because buying was far too expensive.",
                 q="Why don't I own my home?"),
            dict(subject="bank", statement="The owner switched banks from ING to bunq because of the better app.",
                 q="Why did I switch banks?"),
            dict(subject="job offer", statement="The owner declined the job offer from Philips because it required relocating to Eindhoven.",
                 q="Why did I turn down that position?"),
            dict(subject="Vienna trip", statement="The owner chose the train over flying to Vienna to reduce their carbon footprint.",
                 q="Why am I taking the rail route to Austria?"),
            dict(subject="car", statement="The owner sold the old Fiat in 2022 because they cycle everywhere.",
                 q="Why did I get rid of my vehicle?"),
        ])

lineage("dec-dated", DEC, "lexical",
        [E("decision", "{subject}", "On {date} the owner decided to {decision}.")],
        "When did I decide to {decision}?", [
            dict(subject="school", date="12 March 2023", decision="send Milo to the Montessori school"),
            dict(subject="pension", date="4 January 2023", decision="increase the pension contribution"),
            dict(subject="dog", date="20 June 2022", decision="adopt a dog from the shelter"),
            dict(subject="part-time", date="1 September 2022", decision="work four days a week"),
            dict(subject="choir", date="15 October 2022", decision="join the choir board"),
            dict(subject="roof", date="8 May 2023", decision="replace the roof tiles"),
        ])

lineage("dec-not-renew", DEC, "negation",
        [E("decision", "{subject}", "The owner decided not to {what}.", negated=True)],
        "{q}", [
            dict(subject="gym membership", what="renew the gym membership",
                 q="Do I still have a gym membership?"),
            dict(subject="streaming", what="keep the Disney+ subscription after the trial",
                 q="Do I still have that Mickey Mouse video service?"),
            dict(subject="newspaper", what="continue the printed Volkskrant delivery",
                 q="Do I still get the Volkskrant delivered?"),
            dict(subject="second child", what="have a second child",
                 q="Are we planning to grow the family?"),
            dict(subject="master's", what="enrol in the part-time master's programme",
                 q="Am I going back to university for a graduate degree?"),
            dict(subject="extension", what="build the rear extension",
                 q="Are we adding a room at the back of the house?"),
        ])

lineage("dec-agreed-with", DEC, "lexical",
        [E("decision", "{subject}", "The owner and {name} agreed to {what}.")],
        "What did {name} and I agree about {topic}?", [
            dict(subject="holiday", name="Ruth", what="alternate Christmas between both families each year", topic="Christmas"),
            dict(subject="chores", name="Ruth", what="split cooking on weekdays and cleaning at weekends", topic="chores"),
            dict(subject="carpool", name="Bas Jonker", what="share the school drop-off on Tuesdays and Thursdays", topic="the school drop-off"),
            dict(subject="band", name="Nadia Benali", what="stop playing covers and only write originals", topic="the band"),
            dict(subject="fence", name="Ilona Varga", what="split the cost of the new garden fence", topic="the fence"),
            dict(subject="startup", name="Greta Holm", what="keep the library licensed under MIT", topic="the licence"),
        ])

lineage("dec-habit-reason", DEC, "paraphrase",
        [E("decision", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="coffee", statement="The owner stopped drinking coffee after 2 pm because it ruins their sleep.",
                 q="Why do I skip the afternoon espresso?"),
            dict(subject="social media", statement="The owner deleted Instagram because scrolling made them anxious.",
                 q="Why did I delete Instagram?"),
            dict(subject="alcohol", statement="The owner quit alcohol in 2022 to train better.",
                 q="Why did I quit alcohol?"),
            dict(subject="phone", statement="The owner leaves the phone in the hallway at night to sleep better.",
                 q="Why isn't my mobile in the bedroom?"),
            dict(subject="meat", statement="The owner eats meat only at weekends for environmental reasons.",
                 q="Why are my weekday dinners vegetarian?"),
            dict(subject="taxi", statement="The owner never takes Uber because of how it treats drivers.",
                 q="Why do I avoid ride-hailing apps?"),
        ])

lineage("dec-purchase-where", DEC, "lexical",
        [E("decision", "{subject}", "The owner bought {item} from {shop} because {why}.")],
        "Where did I buy {item}?", [
            dict(subject="sofa", item="the green sofa", shop="a vintage dealer in Haarlem", why="it was solid oak"),
            dict(subject="washing machine", item="the washing machine", shop="a local repair shop", why="it came refurbished with a warranty"),
            dict(subject="bike", item="the cargo bike", shop="a dealer in Amersfoort", why="they offered a free service year"),
            dict(subject="glasses", item="the reading glasses", shop="an optician on Voorstraat", why="the online ones never fitted"),
            dict(subject="tent", item="the four-person tent", shop="a camping outlet in Arnhem", why="it was half price"),
            dict(subject="desk", item="the standing desk", shop="an office clearance sale", why="new ones cost 900 euros"),
        ])

lineage("dec-house-rule", DEC, "paraphrase",
        [E("decision", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="screen time", statement="The owner decided the kids get no screens on school nights.",
                 q="What's my rule on screen time for the kids?"),
            dict(subject="shoes indoors", statement="Guests at the owner's home are asked to take off their shoes.",
                 q="Do visitors keep their sneakers on at my place?"),
            dict(subject="pocket money", statement="The owner gives Milo five euros of pocket money every week.",
                 q="What allowance does my son get?"),
            dict(subject="bedtime", statement="The owner set Milo's bedtime at 8 pm, 9 pm at weekends.",
                 q="When does my boy have to be asleep?"),
            dict(subject="dinner table", statement="The owner's family eats dinner together without phones at the table.",
                 q="Are mobiles allowed during our evening meal?"),
            dict(subject="visitors", statement="The owner agreed that relatives stay at most three nights at a time.",
                 q="How long may family members lodge with us?"),
            dict(subject="savings rule", statement="The owner transfers 20 percent of every salary straight into savings.",
                 q="What share of my pay do I put away automatically?"),
        ])

lineage("dec-undecided", DEC, "lexical",
        [E("decision", "{subject}", "The owner has not yet decided between {a} and {b} for {thing}.")],
        "Have I decided on the {thing}?", [
            dict(subject="floor", a="oak planks", b="cork tiles", thing="new floor"),
            dict(subject="holiday", a="Sardinia", b="the Scottish Highlands", thing="summer holiday"),
            dict(subject="school", a="the bilingual school", b="the local primary", thing="secondary school for Milo"),
            dict(subject="electric car", a="a Renault 5", b="a second-hand Tesla", thing="electric car"),
            dict(subject="kitchen", a="a matt black worktop", b="terrazzo", thing="kitchen worktop"),
            dict(subject="wedding venue", a="a barn in Drenthe", b="the botanical garden", thing="wedding venue"),
        ])

# =============================================================================================
# 6. routines
# =============================================================================================

lineage("rout-weekly", ROUT, "paraphrase",
        [E("routine", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="volleyball", statement="Every Tuesday evening the owner plays in a recreational volleyball league.",
                 q="When do I play volleyball?"),
            dict(subject="grandmother", statement="On Sunday mornings the owner calls their grandmother in Friesland.",
                 q="When do I phone my gran?"),
            dict(subject="groceries", statement="The owner does the big grocery shop at Lidl every Saturday at 8.",
                 q="When do I stock up on food for the week?"),
            dict(subject="animal shelter", statement="The owner volunteers at the animal shelter on the first Saturday of each month.",
                 q="How often do I help out with the rescue dogs and cats?"),
            dict(subject="meditation", statement="The owner meditates for 20 minutes right after waking up.",
                 q="When do I meditate?"),
            dict(subject="bins", statement="The owner takes the recycling out on Wednesday nights.",
                 q="Which evening do the rubbish containers go to the kerb?"),
            dict(subject="finances", statement="The owner reviews their finances on the last Sunday of every month.",
                 q="How often do I check my budget?"),
        ])

lineage("rout-clock", ROUT, "lexical",
        [E("routine", "{subject}", "The owner usually {activity} at {time}.")],
        "What time do I usually {activity}?", [
            dict(subject="work start", activity="start work", time="8:15"),
            dict(subject="lunch", activity="have lunch", time="12:30 at their desk"),
            dict(subject="bedtime", activity="go to bed", time="10:45 pm"),
            dict(subject="school drop-off", activity="drop Milo at school", time="8:20"),
            dict(subject="dog walk", activity="walk the dog", time="7 am and 9 pm"),
            dict(subject="swim", activity="swim laps", time="6:30 on Mondays"),
        ])

lineage("rout-health", ROUT, "paraphrase",
        [E("routine", "{subject}", "{statement}", sensitivity="sensitive")],
        "{q}", [
            dict(subject="vitamin D", statement="The owner takes a vitamin D supplement every morning in winter.",
                 q="When do I take vitamin D?"),
            dict(subject="inhaler", statement="The owner uses a preventer inhaler twice a day for asthma.",
                 q="How often do I use my inhaler?"),
            dict(subject="physio exercises", statement="The owner does shoulder rehab exercises every evening before bed.",
                 q="What physiotherapy do I do at night?"),
            dict(subject="blood test", statement="The owner has a thyroid blood test every six months.",
                 q="How often do they check my hormone levels?"),
            dict(subject="dentist", statement="The owner sees the dental hygienist twice a year, in March and September.",
                 q="When are my teeth cleanings scheduled?"),
            dict(subject="eye drops", statement="The owner puts lubricating drops in their eyes during screen work.",
                 q="What do I use when my vision gets dry at the computer?"),
        ])

lineage("rout-commute", ROUT, "paraphrase",
        [E("routine", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="commute", statement="The owner cycles 25 minutes to the office along the canal.",
                 q="How long is my commute?"),
            dict(subject="office days", statement="The owner works from the office on Mondays and Thursdays and from home otherwise.",
                 q="Which days am I at my employer's building?"),
            dict(subject="train pass", statement="The owner uses an off-peak rail pass for trips to Amsterdam.",
                 q="What ticket do I use for getting to the capital?"),
            dict(subject="carpool", statement="On rainy days the owner rides with Bas Jonker by car.",
                 q="How do I travel when the weather is wet?"),
            dict(subject="parking", statement="The owner parks the bike in the underground garage at Jaarbeurs.",
                 q="Where do I park my bike at the station?"),
            dict(subject="podcast", statement="The owner listens to the news podcast on the way to work.",
                 q="What audio do I play while commuting?"),
        ])

lineage("rout-seasonal", ROUT, "paraphrase",
        [E("routine", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="December baking", statement="Every December the owner bakes kerstkransjes with the kids.",
                 q="What holiday cookies do I make each year?"),
            dict(subject="summer camping", statement="Each August the owner goes camping in the Ardennes with old school friends.",
                 q="Where do I pitch a tent with my classmates every summer?"),
            dict(subject="spring cleaning", statement="The owner cleans the gutters every April.",
                 q="When do I clear leaves from the roof drains?"),
            dict(subject="New Year", statement="On New Year's Day the owner takes a dip in the North Sea at Scheveningen.",
                 q="What cold plunge do I do on 1 January?"),
            dict(subject="tax return", statement="The owner files the tax return every March with Lotte's help.",
                 q="When do I do the annual paperwork for the revenue office?"),
            dict(subject="King's Day", statement="On King's Day the owner sells old toys at the free market in the park.",
                 q="What do I do on the national holiday in April?"),
        ])

lineage("rout-with-person", ROUT, "lexical",
        [E("routine", "{subject}", "The owner goes {activity} with {name} every {day}.")],
        "Who do I go {activity} with?", [
            dict(subject="climbing", activity="climbing", name="Yara Haddad", day="Wednesday"),
            dict(subject="chess", activity="to the chess cafe", name="Otto Wagenaar", day="second Friday"),
            dict(subject="cinema", activity="to the cinema", name="Fenna Post", day="last Thursday of the month"),
            dict(subject="market", activity="to the farmers' market", name="Ruth", day="Saturday morning"),
            dict(subject="swimming", activity="swimming", name="Milo", day="Sunday afternoon"),
            dict(subject="walk", activity="for a long walk", name="Ilse Brouwer", day="other Sunday"),
        ])

lineage("rout-maintenance", ROUT, "paraphrase",
        [E("routine", "{subject}", "{statement}")],
        "{q}", [
            dict(subject="coffee machine", statement="The owner descales the coffee machine every six weeks.",
                 q="How often do I remove the limescale from the espresso maker?"),
            dict(subject="bike chain", statement="The owner oils the bike chain every two weeks.",
                 q="How often do I oil my bike chain?"),
            dict(subject="smoke alarm", statement="The owner tests the smoke detectors on the first day of each month.",
                 q="When do I test the smoke alarms?"),
            dict(subject="backups", statement="The owner copies the laptop to an external drive every Friday.",
                 q="How regularly do I save a spare copy of my computer files?"),
            dict(subject="plants", statement="The owner repots the houseplants every spring.",
                 q="When do the indoor greens get fresh soil?"),
            dict(subject="car service", statement="The owner has the car serviced each November before winter.",
                 q="When does my vehicle go to the garage for maintenance?"),
            dict(subject="passwords", statement="The owner changes the important passwords twice a year.",
                 q="How often do I rotate my login credentials?"),
        ])

lineage("rout-stopped", ROUT, "negation",
        [E("routine", "{subject}", "{statement}", negated=True)],
        "{q}", [
            dict(subject="Sunday runs", statement="The owner no longer goes running on Sunday mornings.",
                 q="Do I still jog at the weekend?"),
            dict(subject="choir", statement="The owner stopped singing in the choir in 2022.",
                 q="Am I still in the choir?"),
            dict(subject="language exchange", statement="The owner no longer attends the Thursday language exchange.",
                 q="Do I still go to the conversation meetup on weeknights?"),
            dict(subject="night shifts", statement="The owner does not work night shifts anymore.",
                 q="Am I still on overnight rotas?"),
            dict(subject="smoking", statement="The owner quit smoking in 2019 and does not smoke at all.",
                 q="Do I still smoke?"),
            dict(subject="therapy", statement="The owner ended the weekly therapy sessions last year.",
                 q="Am I still seeing a counsellor every week?"),
        ])

# =============================================================================================
# 7. temporal updates (old version: expired at the change, or retracted as a correction)
# =============================================================================================

lineage("temp-job-current", TEMP, "update-current",
        [X("attribute", "job", "The owner works as {old} at {old_org}.", status="expired", expires="new"),
         E("attribute", "job", "The owner now works as {new} at {new_org}.", when="new")],
        "{q}", [
            dict(old="a data analyst", old_org="Rabobank", new="a product manager", new_org="Bol",
                 q="What's my job now?"),
            dict(old="a primary school teacher", old_org="De Regenboog", new="a curriculum designer", new_org="the education ministry",
                 q="Where am I employed these days?"),
            dict(old="a nurse", old_org="the UMC", new="a midwife", new_org="a practice in Zeist",
                 q="What is my job at present?"),
            dict(old="a barista", old_org="Koffiebar Noord", new="a roastery apprentice", new_org="Bocca",
                 q="What is my present trade?"),
            dict(old="a junior architect", old_org="MVRDV", new="an independent architect", new_org="their own studio",
                 q="Who employs me now?"),
            dict(old="a bus driver", old_org="Qbuzz", new="a train conductor", new_org="NS",
                 q="What is my job nowadays?"),
        ])

lineage("temp-address-current", TEMP, "update-current",
        [X("attribute", "home address", "The owner lives at {old}.", status="expired", expires="new"),
         E("attribute", "home address", "The owner moved to {new}.", when="new")],
        "{q}", [
            dict(old="Twijnstraat 12 in Utrecht", new="Kersenlaan 4 in Amersfoort", q="Which town is my home now?"),
            dict(old="a studio in Rotterdam-Noord", new="a terraced house in Schiedam", q="Where do I reside at the moment?"),
            dict(old="a houseboat in Leiden", new="a flat above a bakery in Gouda", q="What is my current place of residence?"),
            dict(old="Kanaalstraat 80 in Utrecht", new="a farmhouse near Houten", q="Where is my house located presently?"),
            dict(old="a student room in Groningen", new="an apartment in Zwolle", q="Which city do I live in now?"),
            dict(old="Herenstraat 3 in Leiden", new="Vondelstraat 21 in Haarlem", q="What's my street address today?"),
        ])

lineage("temp-job-history", TEMP, "update-historical",
        [E("attribute", "job", "The owner works as {old} at {old_org}.", status="expired", expires="new"),
         X("attribute", "job", "The owner now works as {new} at {new_org}.", when="new")],
        "{q}", [
            dict(old="a junior accountant", old_org="KPMG", new="a controller", new_org="a hospital in Nijmegen",
                 q="What was my job back then?"),
            dict(old="a bike courier", old_org="Deliveroo", new="a logistics planner", new_org="PostNL",
                 q="What did I do for a living at that time?"),
            dict(old="a lab technician", old_org="Wageningen University", new="a quality manager", new_org="FrieslandCampina",
                 q="Where was I employed in that period?"),
            dict(old="a software tester", old_org="Exact", new="a security engineer", new_org="a bank in Amsterdam",
                 q="What job did I have in those days?"),
            dict(old="a copywriter", old_org="an ad agency in Amsterdam", new="a content strategist", new_org="Booking.com",
                 q="What was I working as at that point?"),
            dict(old="a sous-chef", old_org="Restaurant Karel 5", new="a food stylist", new_org="a magazine",
                 q="Which kitchen job did I hold back then?"),
        ], historical=True)

lineage("temp-phone-history", TEMP, "update-historical",
        [X("resource", "{subject}", "The owner's {thing} was {v1}.", status="expired", expires="v2"),
         E("resource", "{subject}", "The owner's {thing} changed to {v2}.", when="v2", status="expired", expires="new"),
         X("resource", "{subject}", "The owner's {thing} is now {v3}.", when="new")],
        "{q}", [
            dict(subject="mobile number", thing="mobile number", v1="06 1234 5501", v2="06 2345 6612", v3="06 3456 7723",
                 q="Which cell line was I reachable on at that point?"),
            dict(subject="wifi password", thing="home wifi password", v1="tulip-harbour-17", v2="kettle-moon-42", v3="orbit-fennel-88",
                 q="What was my home wifi password back then?"),
            dict(subject="GP", thing="doctor's practice", v1="Huisartsen Lombok", v2="Gezondheidscentrum Overvecht", v3="Huisartsen De Bilt",
                 q="Which doctor's practice was I registered with then?"),
            dict(subject="locker", thing="gym locker", v1="number 118", v2="number 204", v3="number 37",
                 q="Which storage cubby at the fitness club did I use back then?"),
            dict(subject="salary account", thing="salary account", v1="at ABN AMRO", v2="at Triodos", v3="at bunq",
                 q="Where did my wages get paid into at that moment?"),
            dict(subject="parking space", thing="parking space", v1="spot 12 in the garage", v2="spot 48 on the roof deck",
                 v3="a permit for the street", q="Where did I leave the car at home back then?"),
        ], historical=True)

lineage("temp-correction", TEMP, "correction",
        [X("event", "{subject}", "The owner's {subject} is on {wrong}.", status="retracted"),
         E("event", "{subject}", "Correction: the owner's {subject} is on {right}, not {wrong}.", when="new")],
        "{q}", [
            dict(subject="dentist appointment", wrong="12 March", right="19 March", q="When is my dentist appointment?"),
            dict(subject="flight to Lisbon", wrong="Friday 3 May", right="Saturday 4 May", q="What day is my flight to Lisbon?"),
            dict(subject="parents' evening", wrong="Tuesday", right="Wednesday", q="When is the teacher meeting about my kid?"),
            dict(subject="car inspection", wrong="22 June", right="29 June", q="When is my car inspection?"),
            dict(subject="team offsite", wrong="the Veluwe on 10 April", right="Texel on 17 April", q="Where and when is our company retreat?"),
            dict(subject="choir concert", wrong="the Janskerk", right="TivoliVredenburg", q="Where is the choir concert?"),
            dict(subject="haircut", wrong="9:00", right="11:30", q="What time is my appointment at the barber?"),
        ])

lineage("temp-pref-change", TEMP, "update-current",
        [X("preference", "{subject}", "{old}", status="expired", expires="new"),
         E("preference", "{subject}", "{new}", when="new")],
        "{q}", [
            dict(subject="morning drink", old="The owner drinks two cups of coffee every morning.",
                 new="The owner switched to green tea in the mornings.", q="What is my morning drink these days?"),
            dict(subject="sport", old="The owner plays squash twice a week.",
                 new="The owner gave up squash and now does padel on Thursdays.", q="Which racket game do I play lately?"),
            dict(subject="diet", old="The owner is pescatarian.",
                 new="The owner has become fully vegetarian and no longer eats fish.", q="Can I still have salmon?"),
            dict(subject="music streaming", old="The owner uses Spotify for music.",
                 new="The owner moved to Apple Music for its lossless audio.", q="Which music streaming app do I use now?"),
            dict(subject="supermarket", old="The owner shops at Albert Heijn.",
                 new="The owner now shops at Ekoplaza for organic produce.", q="Which supermarket do I use now?"),
            dict(subject="news source", old="The owner reads the news on NU.nl.",
                 new="The owner now reads the news in the NRC app.", q="Where do I get my daily headlines at the moment?"),
            dict(subject="bedtime reading", old="The owner reads thrillers before sleeping.",
                 new="The owner now listens to audiobooks before sleeping.", q="How do I wind down at night these days?"),
        ])

lineage("temp-stay-expired", TEMP, "unknown-expired",
        [X("event", "{subject}", "{statement}", status="expired", expires="{until}")],
        "{q}", [
            dict(subject="Lisbon rental", statement="The owner is staying in a rented flat in Lisbon until 31 March.",
                 until="+40d", q="Where am I staying right now?"),
            dict(subject="loan car", statement="The owner drives a loan car from the garage while the Skoda is repaired.",
                 until="+25d", q="What temporary vehicle do I have at the moment?"),
            dict(subject="visiting aunt", statement="Aunt Greet is staying in the owner's guest room this month.",
                 until="+20d", q="Who is sleeping in our spare bedroom currently?"),
            dict(subject="sick leave", statement="The owner is on sick leave after knee surgery.",
                 until="+60d", q="Am I off work for medical reasons now?"),
            dict(subject="holiday", statement="The owner is on holiday in Crete until Sunday.",
                 until="+9d", q="Am I away on vacation today?"),
        ], notes="the only matching fact has expired: nothing valid should be required")

lineage("temp-implicit-update", TEMP, "implicit-update",
        [Fact("distractor", "{type}", "{subject}", "{old}"),
         E("{type}", "{subject}", "{new}", when="new")],
        "{q}", [
            dict(type="routine", subject="gym", old="The owner trains at Basic-Fit on Oudegracht.",
                 new="The owner joined SportCity in Leidsche Rijn.", q="Which gym do I go to now?"),
            dict(type="relationship", subject="hairdresser", old="The owner's hairdresser is Kapsalon Els.",
                 new="The owner now gets haircuts at Barber Bros on Nachtegaalstraat.", q="Where do I get my hair cut these days?"),
            dict(type="resource", subject="phone", old="The owner uses a Pixel 6.",
                 new="The owner bought a Fairphone 5 to replace the Pixel.", q="What phone do I have now?"),
            dict(type="routine", subject="childcare", old="Milo goes to daycare at De Boomhut.",
                 new="Milo now goes to after-school care at Kidsclub Zuid.", q="Where is my son looked after after class these days?"),
            dict(type="attribute", subject="team", old="The owner is in the payments team at work.",
                 new="The owner transferred to the fraud-detection squad.", q="Which group do I belong to at my job now?"),
            dict(type="preference", subject="running shoes", old="The owner runs in Asics Gel-Nimbus shoes.",
                 new="The owner switched to Hoka Clifton running shoes.", q="What brand of trainers do I jog in now?"),
            dict(type="resource", subject="energy contract", old="The owner's energy contract is with Eneco.",
                 new="The owner moved the energy contract to Vandebron.", q="Who is my energy supplier now?"),
        ])

# =============================================================================================
# 8. multi-fact / ambiguity / unknowns
# =============================================================================================

lineage("multi-link-answer", MULTI, "multi-fact",
        [E("relationship", "{name}", "{name} is the owner's {rel}."),
         E("attribute", "{name}", "{name} works as {job}.", when="v2")],
        "What does my {q} do for a living?", [
            dict(name="Joris Hamer", rel="brother", job="a firefighter in Breda", q="male sibling"),
            dict(name="Carla Hamer", rel="aunt on the mother's side", job="a court interpreter", q="mum's sister"),
            dict(name="Rik Meijer", rel="brother-in-law", job="a pilot for Transavia", q="partner's brother"),
            dict(name="Merel Hamer", rel="niece", job="a veterinary nurse", q="brother's daughter"),
            dict(name="Gert Meijer", rel="father-in-law", job="a retired ship engineer", q="partner's dad"),
            dict(name="Bea Hamer", rel="grandmother", job="a former seamstress who now volunteers at a library", q="dad's mother"),
            dict(name="Lucas Oosterhout", rel="godson", job="a student of marine biology", q="baptismal charge"),
            dict(name="Ines Moreau", rel="oldest friend", job="a glassblower in Leerdam", q="longest-standing pal"),
        ])

lineage("multi-list", MULTI, "multi-fact",
        [E("{type}", "{s1}", "{f1}"), E("{type}", "{s2}", "{f2}", when="v2")],
        "{q}", [
            dict(type="event", s1="Lyon trip", f1="The owner is going to Lyon for a conference in November.",
                 s2="Iceland trip", f2="The owner booked a week in Iceland for February.",
                 q="Which journeys abroad do I have planned?"),
            dict(type="constraint", s1="penicillin", f1="The owner is allergic to penicillin.",
                 s2="bee stings", f2="The owner reacts badly to bee stings and carries an adrenaline pen.",
                 q="What should an emergency doctor know about my allergies?"),
            dict(type="resource", s1="streaming", f1="The owner pays for Netflix and Videoland.",
                 s2="cloud storage", f2="The owner pays for 2 TB of Google One storage.",
                 q="Which recurring digital subscriptions do I have?"),
            dict(type="relationship", s1="Hanneke Vos", f1="Hanneke Vos lives two doors down from the owner.",
                 s2="Mehmet Yilmaz", f2="Mehmet Yilmaz lives across the street from the owner.",
                 q="Which of my neighbours live closest to me?"),
            dict(type="goal", s1="half marathon", f1="The owner signed up for the Utrecht half marathon in April.",
                 s2="cycling tour", f2="The owner plans a cycling tour of the Elfsteden route in June.",
                 q="What endurance events are on my calendar?"),
            dict(type="routine", s1="Monday class", f1="The owner has a pottery class on Monday evenings.",
                 s2="Wednesday practice", f2="The owner has band practice on Wednesday evenings.",
                 q="Which weeknights are already taken by hobbies?"),
            dict(type="event", s1="dentist check-up", f1="The owner has a dentist check-up on 4 June.",
                 s2="vet visit", f2="Bruno's vaccination at the vet is on 6 June.",
                 q="What appointments do I have in the first week of June?"),
            dict(type="resource", s1="hidden key", f1="A spare house key is hidden under the blue flowerpot by the back door.",
                 s2="key holder", f2="Mirte Dekker keeps a copy of the owner's front-door key.",
                 q="How can I get inside if I'm locked out?"),
        ])

lineage("multi-same-name", MULTI, "ambiguity",
        [E("relationship", "{n1}", "{n1} is the owner's {r1}."),
         E("relationship", "{n2}", "{n2} is the owner's {r2}.", when="v2")],
        "Who is {first}?", [
            dict(first="Sam", n1="Sam Vos", r1="colleague in the analytics team", n2="Sam de Wit", r2="neighbour with the red van"),
            dict(first="Eva", n1="Eva Janssen", r1="physiotherapist", n2="Eva Smit", r2="friend from the choir"),
            dict(first="Tim", n1="Tim Kramer", r1="son's football coach", n2="Tim de Jong", r2="former flatmate"),
            dict(first="Lisa", n1="Lisa Bakker", r1="cousin in Den Bosch", n2="Lisa Mol", r2="accountant at work"),
            dict(first="Max", n1="Max Veldman", r1="brother-in-law's partner", n2="Max Hofman", r2="climbing instructor"),
            dict(first="Noa", n1="Noa Peeters", r1="goddaughter", n2="Noa Schouten", r2="upstairs neighbour"),
        ])

lineage("multi-conflict", MULTI, "conflict",
        [E("{type}", "{subject}", "{a}"), E("{type}", "{subject}", "{b}", when="v2")],
        "{q}", [
            dict(type="preference", subject="holiday style", a="The owner says beach holidays are the best way to relax.",
                 b="The owner says lying on a beach is boring and prefers hiking trips.", q="What sort of vacation suits me?"),
            dict(type="constraint", subject="penicillin test", a="The owner believes they are allergic to amoxicillin.",
                 b="An allergy test showed the owner tolerates amoxicillin fine.", q="Can I be given that antibiotic?"),
            dict(type="attribute", subject="savings account", a="The owner has about 8,000 euros in the savings account.",
                 b="The owner has roughly 12,000 euros in the savings account.", q="How much money have I got put aside?"),
            dict(type="routine", subject="gym days", a="The owner goes to the gym on Mondays and Fridays.",
                 b="The owner goes to the gym on Tuesdays and Saturdays.", q="On which days do I work out?"),
            dict(type="relationship", subject="Daan Mulder", a="Daan Mulder is the owner's closest friend.",
                 b="The owner says Daan Mulder has become a distant acquaintance.", q="How close am I with Daan?"),
            dict(type="preference", subject="seating", a="The owner wants a window seat on trains.",
                 b="The owner asked for the aisle on trains so they can stretch their legs.", q="Which spot do I want in a railway carriage?"),
        ])

lineage("multi-hop", MULTI, "multi-fact",
        [E("relationship", "{name}", "{name} is the owner's {rel}."),
         E("attribute", "{name}", "{name} lives {where}.", when="v2")],
        "{q}", [
            dict(name="Hendrik Stam", rel="accountant", where="in a canal house on the Prinsengracht",
                 q="Where does the person who does my bookkeeping reside?"),
            dict(name="Pauline Arts", rel="piano teacher", where="next to the Wilhelminapark",
                 q="Where will I find the woman who gives me keyboard lessons?"),
            dict(name="Dirk Jansma", rel="mentor from the first job", where="on a farm near Dokkum",
                 q="In which area is my old career adviser's home?"),
            dict(name="Yusuf Demir", rel="mechanic", where="above his garage on the Kanaalstraat",
                 q="Where is the guy who repairs my car based?"),
            dict(name="Greet Hamer", rel="aunt on the father's side", where="in a retirement home in Zeist",
                 q="Where does my dad's sister live now?"),
            dict(name="Olga Petrova", rel="cleaner", where="in Overvecht with her two daughters",
                 q="Which neighbourhood is the lady who tidies my house from?"),
        ])

lineage("multi-unknown", MULTI, "unknown",
        [D("{type}", "{subject}", "{trap}", by="{by}")],
        "{q}", [
            dict(type="attribute", subject="blood pressure", trap="The owner's father has high blood pressure.", by=None,
                 q="What is my own blood pressure reading?"),
            dict(type="attribute", subject="star sign", trap="Ines said her star sign is Leo.", by="Ines Moreau",
                 q="What is my zodiac sign?"),
            dict(type="attribute", subject="middle name", trap="Joris's middle name is Frederik.", by=None,
                 q="What is my middle name?"),
            dict(type="resource", subject="car insurance", trap="Bas said his car insurance is with Centraal Beheer.", by="Bas Jonker",
                 q="Which company insures my car?"),
            dict(type="preference", subject="favourite colour", trap="Milo's favourite colour is orange.", by=None,
                 q="What is my favourite colour?"),
            dict(type="attribute", subject="tattoo", trap="Ruth has a small swallow tattoo on her ankle.", by=None,
                 q="Where is my tattoo?"),
            dict(type="resource", subject="locker code", trap="The owner's bike lock uses a key, not a code.", by=None,
                 q="What is the code of my padlock at the swimming pool?"),
            dict(type="attribute", subject="nickname", trap="Kees said everyone called him Kaas at school.", by="Kees Bakker",
                 q="What was my childhood nickname?"),
            dict(type="relationship", subject="twin", trap="Hanneke Vos has a twin brother called Harm.", by=None,
                 q="Do I have a twin?"),
            dict(type="attribute", subject="pension age", trap="The owner's mother retired at 63.", by=None,
                 q="At what age can I retire?"),
        ], notes="never supplied: only a hard distractor (often another person's fact) matches")

lineage("multi-unknown-retracted", MULTI, "unknown-retracted",
        [X("{type}", "{subject}", "{statement}", status="retracted")],
        "{q}", [
            dict(type="attribute", subject="marathon time", statement="The owner ran a marathon in 3 hours 40 minutes.",
                 q="What's my personal best over 42 km?"),
            dict(type="constraint", subject="shellfish", statement="The owner cannot eat shrimp.",
                 q="Are prawns off the menu for me?"),
            dict(type="relationship", subject="godmother", statement="Carla is the owner's godmother.",
                 q="Who is my godmother?"),
            dict(type="resource", subject="storage unit", statement="The owner rents a storage box in Nieuwegein.",
                 q="Where is my rented lock-up?"),
            dict(type="goal", subject="Kilimanjaro", statement="The owner plans to climb Kilimanjaro next year.",
                 q="Which African mountain am I going to summit?"),
            dict(type="resource", subject="season ticket", statement="The owner has a season ticket for FC Utrecht.",
                 q="Do I have a stadium pass for the local football team?"),
        ], notes="the only matching fact was retracted by the owner")


# =============================================================================================
# Extra hard distractors, by need ID (lineage-row): same topic, different answer; or the same
# kind of fact about somebody else. Kept apart from the rows so the rows stay readable.
# =============================================================================================

EXTRA_DISTRACTORS: dict[str, list[tuple]] = {
    "attr-stored-item-02": [("near", "shed", "The owner painted the allotment shed dark green last spring.")],
    "attr-stored-item-05": [("near", "photos", "The owner prints a family photo book every December.")],
    "attr-stored-item-06": [("other", "apartment", "Ilona said the deed of her apartment is with her bank.", "Ilona Varga")],
    "attr-body-measure-02": [("other", "blood group", "Ruth said her blood group is A positive.", "Ruth Meijer")],
    "attr-body-measure-04": [("near", "sunglasses", "The owner bought prescription sunglasses for cycling.")],
    "attr-lent-out-01": [("near", "camping", "The owner borrowed a camping table from the neighbours in July.")],
    "attr-lent-out-04": [("near", "television", "The owner mounted the television on the living-room wall.")],
    "attr-qualification-03": [("near", "boat", "The owner rented a canoe on the Vecht last summer.")],
    "attr-home-facts-03": [("near", "phone plan", "The owner's mobile plan includes 20 GB of data a month.")],
    "pref-food-avoid-03": [("other", "pork", "Mehmet said he does not eat pork either.", "Mehmet Yilmaz")],
    "pref-food-avoid-05": [("near", "almond milk", "The owner uses oat milk in coffee because almond milk tastes bitter to them.")],
    "pref-comfort-02": [("near", "hostels", "The owner stayed in a hostel in Ghent on the cycling trip.")],
    "pref-comfort-05": [("near", "webcam", "The owner bought a new webcam for the home office.")],
    "pref-schedule-limit-01": [("near", "school", "The owner joined the parents' council of Milo's school.")],
    "pref-health-constraint-03": [("near", "fruit", "The owner eats an apple with lunch every day.")],
    "pref-health-constraint-06": [("near", "ferry", "The owner enjoyed the big ferry crossing to Harwich.")],
    "pref-gift-wishes-03": [("other", "party", "Kees said he wants a big party for his fortieth.", "Kees Bakker")],
    "rel-kin-city-02": [("near", "Tomas Berger", "Tomas Berger, the owner's godfather, turns seventy in May.")],
    "rel-kin-city-05": [("near", "grandmother", "The owner's grandmother on the father's side lives in Sneek.")],
    "rel-role-02": [("near", "yoga teacher", "The owner's yoga teacher is called Fleur.")],
    "rel-role-06": [("near", "electrician", "The owner's electrician is Ahmed from Zuilen.")],
    "rel-their-needs-02": [("near", "Milo", "The owner's son Milo loves dogs and wants a puppy.")],
    "rel-their-needs-05": [("near", "father", "The owner's father drives an old Volvo.")],
    "rel-pets-01": [("other", "dog", "Yara said her dog is called Pepper.", "Yara Haddad")],
    "rel-pets-04": [("near", "riding lessons", "Milo takes pony riding lessons on Saturdays.")],
    "goal-target-02": [("near", "house prices", "The owner read that house prices in Utrecht rose eight percent.")],
    "goal-target-07": [("other", "promotion", "Farid said he was promoted to director in March.", "Farid Haddad")],
    "goal-collaborator-01": [("near", "podcast", "The owner listens to a podcast about architecture.")],
    "goal-someday-02": [("near", "Baltic", "The owner visited Tallinn on a cruise in 2019.")],
    "goal-course-03": [("near", "machine learning", "The owner's team uses machine learning to detect fraud.")],
    "goal-why-06": [("near", "attic", "The owner found old school reports while clearing the attic.")],
    "dec-chose-because-03": [("near", "mortgage", "The owner asked the bank about mortgage rates in 2022.")],
    "dec-chose-because-05": [("other", "job offer", "Bram said he accepted a job offer in Eindhoven.", "Bram Hendriks")],
    "dec-not-renew-01": [("near", "fitness", "The owner does push-ups at home three times a week.")],
    "dec-habit-reason-01": [("near", "tea", "The owner drinks chamomile tea in the evening.")],
    "dec-habit-reason-04": [("near", "alarm", "The owner uses an old-fashioned alarm clock.")],
    "dec-house-rule-03": [("other", "pocket money", "Bas said his kids get ten euros a week.", "Bas Jonker")],
    "rout-weekly-02": [("near", "grandmother", "The owner's grandmother in Friesland turned ninety-one.")],
    "rout-weekly-06": [("near", "bins", "The owner bought a new green bin for garden waste.")],
    "rout-health-02": [("other", "asthma", "Ruth said her asthma is worse in spring.", "Ruth Meijer")],
    "rout-commute-01": [("near", "canal", "The owner's office looks out on the canal.")],
    "rout-maintenance-01": [("near", "coffee machine", "The owner's coffee machine was a wedding present.")],
    "rout-maintenance-04": [("near", "laptop", "The owner's laptop battery lasts about six hours.")],
    "rout-stopped-01": [("near", "running", "The owner runs to the office on Fridays.")],
    "temp-job-current-01": [("other", "job", "Kees said he works as a data analyst too.", "Kees Bakker")],
    "temp-correction-01": [("near", "dentist", "The owner's dentist is Dr. Visser on the Biltstraat.")],
    "temp-implicit-update-01": [("near", "gym", "The owner's gym bag is in the car.")],
    "multi-link-answer-01": [("other", "brother", "Bruno said his brother works as a police officer.", "Bruno Alves")],
    "multi-same-name-01": [("near", "Samira", "Samira Haddad is Yara's sister.")],
    "multi-conflict-03": [("near", "current account", "The owner keeps about 1,500 euros in the current account.")],
    "multi-hop-01": [("near", "bookkeeping", "The owner keeps receipts in a shoebox for the bookkeeping.")],
}


# =============================================================================================
# The task-context form of each lineage's needs (recall-diagnostic@2): what the assistant is
# doing for the owner when the need comes up, as automatic context assembly receives it
# (``POST /v1/memories/context``: the need's query is the current message, this is ``task``).
# Written once for every lineage before the first context run and never tuned on results.
# Slots come from the query side of a row only: a task never names an answer.
# =============================================================================================

TASKS: dict[str, str] = {
    "attr-stored-item": "Getting paperwork and belongings together before a trip",
    "attr-language-level": "Preparing for a holiday abroad",
    "attr-body-measure": "Filling in a form with personal details",
    "attr-account-email": "Resetting a forgotten password for the {service} account",
    "attr-lent-out": "Checking what is missing from the garage before the weekend",
    "attr-qualification": "Updating the CV and volunteer applications",
    "attr-device-model": "Ordering a replacement part for the {device}",
    "attr-home-facts": "Organising the house move",
    "pref-food-avoid": "Planning a dinner menu",
    "pref-comfort": "Booking travel and tickets",
    "pref-schedule-limit": "Scheduling meetings for next week",
    "pref-budget-cap": "Shopping for {thing}",
    "pref-health-constraint": "Choosing a restaurant for a night out",
    "pref-taste-media": "Picking something to watch or read this weekend",
    "pref-contact-channel": "Setting up reminders and notifications",
    "pref-gift-wishes": "Planning the birthday celebrations",
    "rel-kin-city": "Planning visits to family",
    "rel-how-met": "Writing a short introduction for {name}",
    "rel-role": "Sorting out appointments and contacts",
    "rel-birthday": "Filling in the family calendar",
    "rel-estranged": "Drawing up the guest list for the party",
    "rel-their-needs": "Cooking for visitors",
    "rel-team-role": "Preparing the agenda for the {team} meeting",
    "rel-pets": "Arranging care for the pets during a trip",
    "goal-target": "Reviewing this year's personal goals",
    "goal-project-next": "Planning the weekend's tasks for the {project}",
    "goal-collaborator": "Sending project updates to the people involved",
    "goal-abandoned": "Tidying up the list of hobbies and lessons",
    "goal-deadline": "Planning the calendar for the coming months",
    "goal-someday": "Talking about long-term dreams and plans",
    "goal-course": "Planning evening activities for the term",
    "goal-why": "Writing a motivation letter",
    "dec-chose-because": "Explaining an earlier choice to a friend",
    "dec-dated": "Putting together a timeline of the year's decisions",
    "dec-not-renew": "Going through monthly subscriptions and memberships",
    "dec-agreed-with": "Following up on an agreement with {name}",
    "dec-habit-reason": "Reflecting on daily habits",
    "dec-purchase-where": "Looking for a receipt for a warranty claim",
    "dec-house-rule": "Briefing the babysitter",
    "dec-undecided": "Reviewing open decisions",
    "rout-weekly": "Planning the week",
    "rout-clock": "Planning tomorrow's schedule",
    "rout-health": "Setting up health reminders",
    "rout-commute": "Planning a morning with an early appointment",
    "rout-seasonal": "Preparing for the holiday season",
    "rout-with-person": "Arranging the weekend plans",
    "rout-maintenance": "Making a household maintenance checklist",
    "rout-stopped": "Reviewing exercise habits",
    "temp-job-current": "Updating a professional profile",
    "temp-address-current": "Filling in a change-of-address form",
    "temp-job-history": "Writing down a work history",
    "temp-phone-history": "Tracing old contact details for an account recovery",
    "temp-correction": "Checking the calendar for upcoming appointments",
    "temp-pref-change": "Writing a shopping list for breakfast",
    "temp-stay-expired": "Sharing current whereabouts with family",
    "temp-implicit-update": "Planning a workout",
    "multi-link-answer": "Writing about the family for a reunion",
    "multi-list": "Giving an overview of what is coming up",
    "multi-same-name": "Working out which contact is meant in a message",
    "multi-conflict": "Giving advice that fits current views",
    "multi-hop": "Planning visits around town",
    "multi-unknown": "Filling in a questionnaire about personal details",
    "multi-unknown-retracted": "Answering a question about personal history",
}
