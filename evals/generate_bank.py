"""Stream a large synthetic memory-bank@1 document for load and recall-at-scale measurements.

The hand-written demo bank (``evals/fixtures/make_demo_bank.py``) is realistic but small; the
load gates need a fixed 100,000-belief corpus that still behaves like a real bank under full-text
search, so this script fills owner-message and statement templates from a varied vocabulary
(foods, places, tools, people, dates, quantities...). Every memory cites the message that
supports it (~1 event with 1-2 parts per memory, ~50 memories per session); ~3% are forwarded
messages recorded as attributed, session-scoped memories, and ~2% repeat an earlier statement
exactly (plus ~0.4% accidental repeats), so deduplication has real work to do. All content is
fabricated.

The output is a pure function of ``--memories``, ``--seed`` and ``--per-session``: each session
draws from its own seeded ``random.Random`` and each memory's content from another seeded by its
content index (which is how a duplicate re-derives an earlier memory without keeping it). JSON
is written object by object, one per line, into ``OUTPUT.partial`` (memories via a temporary
spool file, since they follow all events) and renamed into place only when complete.
``--check`` re-reads the file and runs the same ``check`` the demo bank uses.

Usage: ``python evals/generate_bank.py --memories 100000 --output /tmp/bank-100k.json [--seed 7]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

try:
    from evals.fixtures.make_demo_bank import FORMAT, check, load_strict
except ImportError:  # run as a script (python evals/generate_bank.py): put the repo root on path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from evals.fixtures.make_demo_bank import FORMAT, check, load_strict

# Timeline: sessions start at BASE and are spaced so a bank spans about a year, but never so close
# that one session's turns could run into the next (then the timeline simply grows longer).
BASE_EPOCH = 1735718400  # 2025-01-01T08:00:00Z, safely in the past
TIMELINE_SECONDS = 365 * 86400
SESSION_JITTER_SECONDS = 15 * 60
EVENT_GAP_SECONDS = (20, 80)
ASSISTANT_GAP_SECONDS = (10, 40)
RECORDING_LAG_SECONDS = (2, 6)
# Worst case per memory: a proposal, the message and a reply.
MAX_TURN_SECONDS = 2 * ASSISTANT_GAP_SECONDS[1] + EVENT_GAP_SECONDS[1]

# Rates per memory.
ATTRIBUTED_RATE = 0.03
DUPLICATE_RATE = 0.02
CONFIRMED_RATE = 0.03  # the owner confirms an assistant proposal (AFFIRMED, cites both)
ASSISTANT_REPLY_RATE = 0.15
RETRACTED_RATE = 0.01
EXPIRED_RATE = 0.01
FUTURE_EXPIRY_RATE = 0.01
SECOND_PART_RATE = 0.4

# Kinds of generated IDs (the second group of every UUID).
PERSON, SESSION, EVENT, PART, MEMORY = 1, 2, 3, 4, 5

PEOPLE = (
    "Amara Osei", "Bruno Keller", "Chiara Russo", "Daan de Vries", "Elif Yilmaz", "Farah Aziz",
    "Gustav Lund", "Hana Novak", "Ivo Jansen", "Julia Moreau", "Kenji Sato", "Lotte Visser",
)

PROJECTS = (
    "garden-shed", "thesis-revision", "wedding-planning", "home-solar", "novel-draft",
    "bike-restoration", "data-platform", "language-exam", "attic-conversion", "podcast-launch",
)

# Slot vocabularies. Pairs are (third person, first person) verb forms. Every template carries at
# least one high-cardinality slot (a date, a street address, an amount...) or a low weight, so
# accidental exact duplicates stay rare and the deliberate ones (DUPLICATE_RATE) dominate.
VOCAB: dict[str, tuple] = {
    "drink": ("green tea", "espresso", "oat flat white", "rooibos", "sparkling water",
              "filter coffee", "chai", "matcha", "hot chocolate", "ginger tea", "kombucha",
              "decaf americano", "mint tea", "cortado"),
    "drink_context": ("at the office", "on weekend mornings", "when working late", "after dinner",
                      "on the train", "in winter", "at family visits", "before a long run",
                      "during deadlines", "on holiday", "with breakfast", "in meetings",
                      "after climbing", "when it rains", "at the allotment", "while reading",
                      "on Sunday afternoons", "at conferences", "when guests come over",
                      "after a bad night's sleep"),
    "daypart": ("morning", "afternoon", "evening", "late evening", "early morning"),
    "dish": ("mezze platter", "ramen", "injera with lentils", "khachapuri", "pho", "ceviche",
             "arancini", "bibimbap", "tacos al pastor", "pide", "rendang", "pintxos",
             "dal makhani", "okonomiyaki", "shakshuka", "gnocchi", "falafel wrap", "laksa"),
    "eatery_kind": ("Cafe", "Bistro", "Eethuis", "Trattoria", "Kantine", "Brasserie", "Bar",
                    "Warung", "Taverna", "Deli"),
    "eatery_name": ("Luna", "De Zwaan", "Olijf", "Sakura", "Habibi", "Marengo", "Tigris",
                    "Atlas", "Fenix", "Basilico", "Het Anker", "Noord", "Saffraan", "Koi",
                    "Lemon", "De Kade", "Piment", "Oost", "Mosaic", "Tamarind"),
    "street": ("Keizerstraat", "Oudegracht", "Biltstraat", "Voorstraat", "Lange Nieuwstraat",
               "Twijnstraat", "Nachtegaalstraat", "Amsterdamsestraatweg", "Kanaalstraat",
               "Burgemeester Reigerstraat", "Wittevrouwenstraat", "Adriaen van Ostadelaan",
               "Croeselaan", "Jutfaseweg", "Vleutenseweg", "Merelstraat", "Zadelstraat",
               "Lijnmarkt", "Springweg", "Mariaplaats", "Herenstraat", "Boothstraat",
               "Waterstraat", "Lauwerecht", "Prins Hendriklaan", "Maliesingel", "Catharijnesingel",
               "Weerdsingel", "Hoogt", "Potterstraat", "Ganzenmarkt", "Steenweg", "Zuilenstraat",
               "Balijelaan", "Kardinaal de Jongweg", "Cartesiusweg", "Europalaan",
               "Van Lieflandlaan", "Hendrika van Tussenbroeklaan", "Pijlsweerdlaan"),
    "food": ("olives", "mushrooms", "aubergine", "blue cheese", "anchovies", "beetroot",
             "liquorice", "oysters", "tofu", "brussels sprouts", "goat cheese", "raw onion",
             "pickled herring", "celery"),
    "dishtype": ("salads", "soups", "sandwiches", "pasta", "curries", "stir-fries", "wraps",
                 "omelettes", "pizza", "rice bowls", "stews", "lunch boxes", "tapas",
                 "side dishes", "sauces"),
    "genre": ("jazz", "lo-fi beats", "baroque music", "afrobeat", "ambient", "bossa nova",
              "post-rock", "film scores", "old soul records", "synthwave", "fado"),
    "doing": ("cooking", "writing", "reading", "cleaning", "coding", "painting", "commuting",
              "gardening", "ironing"),
    "adjective": ("Slow", "Blue", "Quiet", "Golden", "Rainy", "Late", "Soft", "Wild", "Deep",
                  "Northern", "Lazy", "Electric", "Velvet", "Midnight", "Sunday", "Paper",
                  "Warm", "Hidden", "Open", "Little"),
    "noun": ("Mornings", "Rooms", "Waves", "Lights", "Hours", "Roads", "Gardens", "Rivers",
             "Windows", "Echoes", "Maps", "Tides", "Fields", "Clouds", "Streets", "Letters",
             "Harbours", "Forests", "Stairs", "Signals"),
    "app": ("Obsidian", "Todoist", "Notion", "Google Calendar", "Apple Notes", "Things",
            "Trello", "Logseq", "Fantastical", "Anki", "Readwise", "Pocket Casts"),
    "task": ("note taking", "task lists", "meal planning", "budget tracking", "journaling",
             "language practice", "reading lists", "habit tracking", "trip planning"),
    "device": ("phone", "work laptop", "tablet", "e-ink tablet", "desktop"),
    "seat": ("window", "aisle", "front-facing", "quiet-carriage"),
    "transport": ("train", "bus", "plane", "ferry"),
    "hours": ("2", "3", "4", "5", "6", "7", "8", "9", "10", "12"),
    "gift": ("a ceramics workshop voucher", "a good chef's knife", "concert tickets",
             "a framed print", "a vinyl record", "a board game", "a plant", "a spa day",
             "a book of poems", "hiking socks", "a fountain pen", "a cookbook",
             "a climbing chalk bag", "a wool scarf", "a photo book"),
    "occasion": ("birthday", "graduation", "housewarming", "retirement", "anniversary"),
    "exercise": (("goes swimming", "go swimming"), ("does yoga", "do yoga"),
                 ("goes for a run", "go for a run"), ("plays squash", "play squash"),
                 ("lifts weights", "lift weights"), ("goes bouldering", "go bouldering"),
                 ("does a spin class", "do a spin class"), ("does pilates", "do pilates"),
                 ("plays five-a-side football", "play five-a-side football"),
                 ("rows", "row"), ("takes a dance class", "take a dance class")),
    "venue_name": ("Galgenwaard", "Krommerijn", "De Kwakel", "Overvecht", "Lunetten",
                   "Zuilen", "Leidsche Rijn", "Maarschalkerweerd", "Wilhelmina", "Transwijk",
                   "Kanaleneiland", "Rijnsweerd", "Tuindorp", "Hoograven", "Voordorp",
                   "Vechtsebanen", "Lombok", "Oog in Al", "Zeist", "Bunnik", "Nieuwegein",
                   "Maarssen", "De Bilt", "Houten", "Vleuten"),
    "venue_kind": ("sports centre", "gym", "pool", "park", "studio", "club", "hall", "track"),
    "chore": (("does the grocery shopping", "do the grocery shopping"),
              ("cleans the bathroom", "clean the bathroom"),
              ("waters the plants", "water the plants"), ("does the laundry", "do the laundry"),
              ("meal-preps lunches", "meal-prep lunches"), ("takes out the recycling",
              "take out the recycling"), ("backs up their laptop", "back up my laptop"),
              ("reviews the weekly budget", "review the weekly budget")),
    "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "plant": ("monstera", "fiddle-leaf fig", "basil plant", "lemon tree", "orchid",
              "snake plant", "bonsai", "olive tree"),
    "room": ("kitchen", "living room", "bedroom", "study", "hallway", "bathroom", "balcony",
             "guest room"),
    "mode": ("bike", "train", "bus", "car", "e-bike"),
    "commitment": ("school pickup", "a standing call with the Toronto office", "physiotherapy",
                   "choir rehearsal", "a language class", "volunteering at the food bank",
                   "a weekly therapy session", "band practice"),
    "allergen": ("peanuts", "shellfish", "birch pollen", "latex", "sesame", "kiwi",
                 "house dust mites", "wasp stings", "horses"),
    "medication": ("an EpiPen", "antihistamines", "an inhaler", "cetirizine", "a rescue kit"),
    # (name, typical price in euros)
    "purchase": (("a new laptop", 1400), ("a cargo bike", 3200), ("the summer holiday", 2500),
                 ("a standing desk", 600), ("new hiking boots", 220), ("a sofa", 1800),
                 ("a road bike", 1900), ("a camera lens", 900), ("the wedding gift", 250),
                 ("winter tyres", 650), ("a heat pump", 9000), ("a sewing machine", 450),
                 ("a piano", 4500), ("a tent", 380), ("new glasses", 420), ("a drone", 800)),
    "topic": ("newsletters", "package deliveries", "news alerts", "calendar changes",
              "social media", "group chats", "price drops", "sports scores"),
    "relation": ("cousin", "neighbour", "former colleague", "running buddy", "landlord",
                 "godmother", "flatmate from university", "mentor", "accountant",
                 "piano teacher", "sister-in-law", "oldest friend", "dentist", "bandmate"),
    "context": ("a pottery class", "university", "the climbing gym", "a previous job",
                "a language exchange", "the neighbourhood association", "a wedding in Lyon",
                "an online chess club", "the allotment garden", "a hackathon"),
    "goal": ("run a 10 km race", "read 30 books", "learn to make sourdough",
             "finish the garden shed", "pass the B2 Spanish exam", "build an emergency fund",
             "cycle from Amsterdam to Paris", "learn basic Japanese", "swim a full kilometre",
             "publish a short story", "climb a 6b route", "learn to play the cello"),
    "month": ("January", "February", "March", "April", "May", "June", "July", "August",
              "September", "October", "November", "December"),
    "project": ("the garden shed", "the thesis revision", "the wedding planning",
                "the rooftop solar install", "the novel draft", "the bike restoration",
                "the data platform rebuild", "the attic conversion", "the podcast launch",
                "the family photo archive", "the allotment plot", "the home network upgrade"),
    "phase": ("planning", "design", "building", "testing", "review", "wrap-up"),
    "option": ("Postgres", "SQLite", "the oak finish", "the walnut finish", "a tent",
               "a cabin", "the train", "the night bus", "paper maps", "an e-reader",
               "a Fairphone", "a refurbished iPhone", "linen curtains", "wooden blinds"),
    "purpose": ("the side project", "the holiday", "the living room", "the commute",
                "the new phone", "the reading habit", "the guest room"),
    "document": ("passport", "birth certificate", "insurance policy", "rental contract",
                 "vaccination record", "warranty receipts", "tax returns", "spare house keys",
                 "car registration", "diploma"),
    "location": ("the grey folder in the hallway cabinet", "the fireproof box under the bed",
                 "the shared Dropbox folder", "the top drawer of the desk",
                 "the 'Admin' folder on the NAS", "the kitchen drawer by the window",
                 "a labelled envelope in the bookcase", "the encrypted vault on the laptop"),
    "tool": ("a Raspberry Pi", "a label printer", "a laser measure", "a 3D printer",
             "a tile cutter", "a pressure cooker", "a Kindle", "a bike trainer",
             "a sewing machine", "a soldering iron", "a drum machine"),
    "service": ("Spotify", "Netflix", "iCloud storage", "gym", "Guardian", "meal-kit box",
                "Duolingo", "VPN", "Audible", "car-sharing", "phone plan", "cloud backup",
                "museum card", "wine club", "Strava"),
    "language": ("Spanish", "German", "Italian", "Japanese", "Arabic", "Polish", "Swahili",
                 "French", "Portuguese", "Mandarin", "Turkish"),
    "level": ("beginner", "intermediate", "conversational", "fluent", "native"),
    "city": ("Ghent", "Lyon", "Kraków", "Bologna", "Tromsø", "Porto", "Leipzig", "Tallinn",
             "Valencia", "Galway", "Ljubljana", "Aarhus", "Thessaloniki", "Bordeaux", "Basel",
             "Antwerp", "Bilbao", "Edinburgh", "Gdańsk", "Graz", "Groningen", "Lisbon",
             "Lucca", "Malmö", "Marseille", "Nantes", "Nijmegen", "Oslo", "Palermo", "Riga",
             "Salzburg", "Seville", "Split", "Tartu", "Toulouse", "Trieste", "Turku",
             "Vilnius", "Wrocław", "Zagreb"),
    "event_kind": ("a jazz concert", "a friend's wedding", "a data engineering meetup",
                   "a food festival", "a climbing competition", "a book launch",
                   "a design conference", "a half-marathon", "an open-air cinema night",
                   "a ceramics fair", "a chess tournament", "a family reunion"),
    "appointment": ("a dentist appointment", "a haircut", "a physio session",
                    "a bank meeting", "an eye test", "a car service", "a vet visit",
                    "a parent-teacher meeting", "a tax advisor call", "a blood test"),
    "appliance": (("dishwasher", 650), ("washing machine", 700), ("espresso machine", 450),
                  ("fridge", 900), ("oven", 800), ("vacuum cleaner", 300), ("boiler", 2200),
                  ("bike", 1100), ("dryer", 750), ("television", 1000)),
    "shop": ("Coolblue", "MediaMarkt", "the Saturday market", "IKEA", "a second-hand shop",
             "Marktplaats", "the bike shop on Twijnstraat", "Bol.com", "a local kitchen studio",
             "Gamma", "Praxis", "a stall at the flea market", "the Miele outlet", "Decathlon",
             "HEMA", "the neighbours", "Blokker", "a shop in Antwerp", "Fonq", "Wehkamp"),
    "vehicle": ("car", "cargo bike", "e-bike", "scooter", "camper van"),
    "favour": ("send the photos", "return the drill", "confirm the dinner booking",
               "share the slides", "sign the birthday card", "water the plants",
               "check the flight times", "forward the invoice"),
    "place_kind": ("library", "market", "swimming pool", "bakery", "bike repair shop",
                   "community garden", "deli", "climbing gym", "cinema", "record shop"),
    "book": (("Piranesi", "Susanna Clarke"), ("The Overstory", "Richard Powers"),
             ("Klara and the Sun", "Kazuo Ishiguro"), ("Braiding Sweetgrass",
             "Robin Wall Kimmerer"), ("The Dispossessed", "Ursula K. Le Guin"),
             ("Stoner", "John Williams"), ("A Gentleman in Moscow", "Amor Towles"),
             ("Project Hail Mary", "Andy Weir"), ("Circe", "Madeline Miller"),
             ("Station Eleven", "Emily St. John Mandel"), ("The Vegetarian", "Han Kang"),
             ("Pachinko", "Min Jin Lee"), ("The Left Hand of Darkness", "Ursula K. Le Guin"),
             ("Never Let Me Go", "Kazuo Ishiguro"), ("Middlemarch", "George Eliot")),
    "gathering": ("barbecue", "board game night", "birthday dinner", "housewarming",
                  "picnic in the park", "book club", "potluck", "leaving drinks"),
    "job": ("a nurse", "a civil engineer", "a primary school teacher", "a UX designer",
            "a baker", "a translator", "an electrician", "a lawyer", "a physiotherapist",
            "a museum curator", "a pharmacist", "a software developer", "a journalist",
            "a bike mechanic", "a social worker", "a florist", "an accountant", "a chef",
            "a researcher", "a pilot"),
    "weather": ("grey and drizzly", "unexpectedly sunny", "windy", "freezing", "humid"),
}

FILLERS = (
    "Anyway, that's it for now.", "Just so you have it for later.", "Thanks!",
    "No need to do anything with this yet.", "Sorry for the wall of text today.",
    "The weather in {city} was {weather} today, by the way.",
    "Also, I'm halfway through {book_title} and loving it.",
    "Long day - I spent most of it {doing}.",
    "Remind me to ask about this again next week maybe.",
)

ASSISTANT_REPLIES = (
    "Noted - I'll remember that.", "Got it, saved under {subject}.",
    "Thanks, I've updated my notes about {subject}.", "Understood.",
    "Okay! Anything else I should know about {subject}?",
    "Saved. I'll bring this up when it's relevant.",
)

# Decisions that make sense for each project in VOCAB["project"].
PROJECT_DECISIONS = {
    "the garden shed": ("use reclaimed timber", "go with the cheaper quote", "add a green roof",
                        "pour a concrete base"),
    "the thesis revision": ("hire a freelance editor", "cut the third chapter",
                            "rerun the survey analysis", "ask for a two-month extension"),
    "the wedding planning": ("cap the guest list at eighty", "book the venue in Lucca",
                             "skip the live band", "switch caterers"),
    "the rooftop solar install": ("go with the cheaper quote", "add a home battery",
                                  "wait for the subsidy round", "switch installers"),
    "the novel draft": ("hire a freelance editor", "rewrite the opening in first person",
                        "drop the prologue", "query agents in spring"),
    "the bike restoration": ("respray the frame green", "keep the original gears",
                             "buy a second-hand wheelset", "switch to drop bars"),
    "the data platform rebuild": ("start with a pilot group", "self-host the backups",
                                  "move orchestration to Dagster", "postpone the launch"),
    "the attic conversion": ("drop the second bathroom", "add a dormer window",
                             "use the cheaper insulation", "switch suppliers"),
    "the podcast launch": ("record episodes in batches", "postpone the launch",
                           "publish every two weeks", "buy a second microphone"),
    "the family photo archive": ("scan everything at 600 dpi", "use a NAS for storage",
                                 "self-host the backups", "label photos by decade"),
    "the allotment plot": ("plant only perennials", "build raised beds", "share the plot",
                           "skip potatoes this year"),
    "the home network upgrade": ("use a mesh Wi-Fi system", "run cable to the attic",
                                 "self-host the backups", "replace the ISP router"),
}

PROPOSALS = (
    "Should I remember that about {subject}?", "Do you want me to keep a note on {subject}?",
    "Shall I save this as a standing preference for {subject}?",
)

# (weight, belief_type, subject, statement, owner message, sensitivity, negated). Templates
# with few possible fillings get small weights so they do not repeat themselves.
TEMPLATES = (
    (5, "preference", "{drink}",
     "The owner has preferred {drink} over {drink2} {drink_context} since {since}.",
     "Since {since} I've preferred {drink} over {drink2} {drink_context}.", "internal", False),
    (10, "preference", "{eatery}",
     "The owner has been going to {eatery} on {street} for the {dish} since {since}.",
     "I've been going to {eatery} on {street} for the {dish} since {since}.", "internal", False),
    (1, "preference", "{genre}",
     "The owner listens to {genre} while {doing}, usually the playlist '{playlist}'.",
     "When I'm {doing} I put on {genre} - usually my playlist '{playlist}'.", "public", False),
    (0.05, "preference", "{food}", "The owner does not want {food} in {dishtype}.",
     "Please never put {food} in my {dishtype}, I really don't like it.", "internal", True),
    (2, "preference", "{task}",
     "The owner has used {app} for {task} on their {device} since {since}.",
     "I've been using {app} for {task} on my {device} since {since}.", "internal", False),
    (0.05, "preference", "{transport} seats",
     "The owner prefers {seat} seats on {transport} journeys over {hours} hours.",
     "On {transport} journeys over {hours} hours I want a {seat} seat.", "internal", False),
    (0.5, "preference", "gifts for {person}",
     "The owner wants to give {person} {gift} for their {occasion} in {year}.",
     "For {person}'s {occasion} in {year} I'm thinking of giving {gift}.", "internal", False),
    (10, "routine", "{weekday} exercise",
     "The owner {exercise_3p} every {weekday} at {clock} at {venue}.",
     "Every {weekday} at {clock} I {exercise_1p} at {venue}.", "internal", False),
    (0.2, "routine", "{weekday} chores", "The owner {chore_3p} on {weekday}s around {clock}.",
     "I usually {chore_1p} on {weekday}s around {clock}.", "internal", False),
    (0.2, "routine", "{drink}",
     "The owner drinks {n} cups of {drink} a day and none after {clock}.",
     "I'm at {n} cups of {drink} a day, never after {clock}.", "internal", False),
    (0.05, "routine", "{plant}", "The owner waters the {plant} in the {room} every {n} days.",
     "The {plant} in the {room} gets water every {n} days.", "public", False),
    (5, "routine", "commute",
     "The owner's commute to {street} {number} by {mode} takes about {minutes} minutes.",
     "Getting to {street} {number} by {mode} takes me about {minutes} minutes.", "sensitive",
     False),
    (0.2, "routine", "calls with {person}", "The owner calls {person} every {weekday} at {clock}.",
     "I call {person} every {weekday} at {clock}.", "internal", False),
    (0.5, "constraint", "{weekday} meetings",
     "The owner cannot take meetings on {weekday}s between {clock_range} because of "
     "{commitment}.",
     "No meetings on {weekday}s between {clock_range} - I have {commitment}.", "sensitive",
     True),
    (0.05, "constraint", "{allergen} allergy",
     "The owner is allergic to {allergen} and carries {medication}.",
     "I'm allergic to {allergen} - I always carry {medication}.", "sensitive", False),
    (0.3, "constraint", "budget for {purchase}",
     "The owner's budget for {purchase} is {purchase_price} euros until {month}.",
     "My budget for {purchase} is {purchase_price} euros, max, until {month}.", "sensitive", False),
    (0.05, "constraint", "{topic} notifications",
     "The owner does not want notifications about {topic} after {clock}.",
     "No notifications about {topic} after {clock}, please.", "internal", True),
    (0.05, "relationship", "{person}", "{person} is the owner's {relation}.",
     "{person} is my {relation}.", "sensitive", False),
    (0.1, "relationship", "{person}", "The owner met {person} through {context} in {year}.",
     "I met {person} through {context} back in {year}.", "internal", False),
    (0.02, "relationship", "{person}", "The owner does not get along with {person}.",
     "Honestly, I don't get along with {person} at all.", "restricted", True),
    (1, "fact", "{person}", "{person} moved to {city} in {since}.",
     "{person} moved to {city} in {since}.", "internal", False),
    (0.5, "goal", "{goal}", "The owner wants to {goal} by {date}.", "I want to {goal} by {date}.",
     "internal", False),
    (3, "goal", "saving for {purchase}",
     "The owner is saving {purchase_price} euros for {purchase} by {date}.",
     "I'm putting aside {purchase_price} euros for {purchase} by {date}.", "restricted", False),
    (2, "project", "{project}",
     "The owner is working on {project} with {person} and meets them on {weekday}s at {clock}.",
     "I'm working on {project} with {person} - we meet on {weekday}s at {clock}.", "internal",
     False),
    (2, "project", "{project}", "The owner's {project} entered the {phase} phase on {past_date}.",
     "{Project} entered the {phase} phase on {past_date}.", "internal", False),
    (0.5, "project", "{project}", "The owner's deadline for {project} is {date}.",
     "The deadline for {project} is {date}.", "internal", False),
    (10, "decision", "{project}",
     "The owner and {person} decided to {decision} for {project} on {past_date}.",
     "On {past_date} {person} and I decided to {decision} for {project}.", "internal", False),
    (5, "decision", "{project}",
     "The owner and {person} decided not to {decision} for {project} on {past_date}.",
     "On {past_date} {person} and I decided we won't {decision} for {project}.", "internal",
     True),
    (5, "decision", "{purpose}",
     "For {purpose}, the owner chose {option} over {option2} with a budget of {amount} euros.",
     "For {purpose} I went with {option} over {option2}, budget {amount} euros.", "internal",
     False),
    (0.05, "resource", "{document}", "The owner keeps their {document} in {location}.",
     "My {document} is in {location}.", "sensitive", False),
    (2, "resource", "{tool}", "The owner has {tool} on loan from {person} until {date}.",
     "I've borrowed {tool} from {person} until {date}.", "internal", False),
    (3, "resource", "{service}",
     "The owner's {service} subscription costs {price} euros a month and renews on {day}.",
     "My {service} subscription is {price} euros a month, renews on {day}.", "sensitive", False),
    (0.3, "attribute", "{language}",
     "The owner speaks {language} at a {level} level and has studied it since {since}.",
     "My {language} is {level} - I've been studying it since {since}.", "public", False),
    (0.05, "attribute", "hometown", "The owner grew up in {city} and lived there until {year}.",
     "I grew up in {city} and lived there until {year}.", "internal", False),
    (6, "event", "{event_kind}", "The owner attended {event_kind} in {city} on {past_date}.",
     "I was at {event_kind} in {city} on {past_date}.", "internal", False),
    (5, "event", "{appointment}", "The owner has {appointment} on {date} at {clock}.",
     "I have {appointment} on {date} at {clock}.", "internal", False),
    (10, "event", "trip to {city}",
     "The owner is travelling to {city} with {person} on {date} for {n} nights.",
     "{person} and I are off to {city} on {date} for {n} nights.", "sensitive", False),
    (10, "fact", "{appliance}",
     "The owner's {appliance} was bought at {shop} in {since} for {appliance_price} euros.",
     "We bought the {appliance} at {shop} in {since} for {appliance_price} euros.", "public",
     False),
    (10, "event", "{event_kind}",
     "The owner has tickets for {event_kind} in {city} with {person} on {date}.",
     "Got tickets for {event_kind} in {city} with {person} on {date}!", "internal", False),
    (10, "fact", "{purchase}",
     "The owner paid {purchase_price} euros for {purchase} on {past_date}.",
     "Paid {purchase_price} euros for {purchase} on {past_date}, ouch.", "sensitive", False),
    (5, "routine", "{weekday} exercise",
     "The owner {exercise_3p} with {person} every {weekday} at {clock} at {venue}.",
     "{person} and I {exercise_1p} every {weekday} at {clock} at {venue}.", "internal", False),
    (2, "resource", "{document}", "The owner's {document} number ends in {digits}.",
     "My {document} number ends in {digits}, in case a form asks.", "restricted", False),
    (3, "fact", "{person}", "{person} lives at {street} {number} in Utrecht.",
     "{person} lives at {street} {number} in Utrecht now.", "sensitive", False),
    (0.5, "fact", "{person}", "{person} lives in {city} and works as {job}.",
     "{person} lives in {city} now, working as {job}.", "internal", False),
    (0.05, "fact", "{person}", "{person} does not eat {food}.",
     "Remember {person} doesn't eat {food}.", "internal", True),
    (0.1, "fact", "{vehicle}", "The owner's {vehicle} has done {odometer} km.",
     "The {vehicle} is at {odometer} km now.", "public", False),
)

# Forwarded messages: (weight, belief_type, subject, statement, the person's own message).
ATTRIBUTED_TEMPLATES = (
    (1, "event", "{gathering}", "{person} says the {gathering} is on {date} at {clock}.",
     "Hi! The {gathering} is on {date} at {clock}, see you there."),
    (1, "fact", "{place}", "{person} says {place} is closed on {weekday}s from {month}.",
     "FYI {place} is closed on {weekday}s from {month} onwards."),
    (1, "preference", "{book_title}",
     "{person} recommends {book_title} by {book_author} and will lend it on {date}.",
     "You have to read {book_title} by {book_author}! I can lend it to you on {date}."),
    (1, "decision", "{gathering}", "{person} says they will bring {dish} to the {gathering} on "
     "{date}.", "I'll bring {dish} to the {gathering} on {date}!"),
    (1, "goal", "{favour}", "{person} asked the owner to {favour} before {date}.",
     "Could you {favour} before {date}? Thanks!"),
    (1, "fact", "{street}", "{person} says they are moving to {street} {number} on {date}.",
     "Big news: I'm moving to {street} {number} on {date}!"),
)


def _cumulative(templates) -> list[float]:
    total, weights = 0.0, []
    for template in templates:
        total += template[0]
        weights.append(total)
    return weights


TEMPLATE_WEIGHTS = _cumulative(TEMPLATES)
ATTRIBUTED_WEIGHTS = _cumulative(ATTRIBUTED_TEMPLATES)

PROBABILITY_EXTRACTED, PROBABILITY_INFERRED = 0.25, 0.08


def _iso(epoch: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


class Slots(dict):
    """Fills template slots on first use; ``{x2}`` draws a value different from ``{x}``."""

    def __init__(self, rng: random.Random):
        super().__init__()
        self.rng = rng
        self.people: list[int] = []

    def __missing__(self, key: str) -> str:
        rng = self.rng
        if key == "person":
            index = rng.randrange(len(PEOPLE))
            self.people.append(index)
            value = PEOPLE[index]
        elif key in COMPUTED:
            value = COMPUTED[key](self, rng)
        elif key[0].isupper():  # "{Project}": the same value, capitalised to open a sentence
            lower = self[key[0].lower() + key[1:]]
            value = lower[0].upper() + lower[1:]
        elif key.endswith(("_3p", "_1p")):
            name = key[:-3]
            pair = self.get(name) or rng.choice(VOCAB[name])
            self[name] = pair
            value = pair[0] if key.endswith("_3p") else pair[1]
        elif key[-1].isdigit():
            name = key.rstrip("0123456789")
            value = self[name]
            while value == self[name]:
                value = rng.choice(VOCAB[name])
        else:
            value = rng.choice(VOCAB[key])
        self[key] = value
        return value


def _clock(rng: random.Random, first: int = 6 * 4, last: int = 22 * 4) -> str:
    quarter = rng.randrange(first, last)
    return f"{quarter // 4:02d}:{quarter % 4 * 15:02d}"


def _book(slots: Slots, part: int) -> str:
    pair = slots.get("book") or slots.rng.choice(VOCAB["book"])
    slots["book"] = pair
    return pair[part]


def _priced(slots: Slots, rng: random.Random, name: str) -> str:
    slots[f"{name}_pair"] = pair = rng.choice(VOCAB[name])
    return pair[0]


def _price(slots: Slots, rng: random.Random, name: str) -> str:
    slots[name]  # draw the item first if the template names its price before it
    typical = slots[f"{name}_pair"][1]
    return f"{round(typical * rng.uniform(0.6, 1.6), -1):,.0f}"


# Slots computed rather than drawn from one list (numbers, dates, composed names).
COMPUTED = {
    "n": lambda s, rng: str(rng.randint(2, 6)),
    "number": lambda s, rng: str(rng.randint(1, 220)),
    "digits": lambda s, rng: f"{rng.randrange(10000):04d}",
    "minutes": lambda s, rng: str(rng.randrange(10, 95, 5)),
    "amount": lambda s, rng: f"{rng.randrange(50, 3000, 10):,}",
    "price": lambda s, rng: f"{rng.randint(3, 29)}.99",
    "odometer": lambda s, rng: f"{rng.randrange(1000, 200000, 500):,}",
    "year": lambda s, rng: str(rng.randint(2005, 2025)),
    "since": lambda s, rng: f"{rng.choice(VOCAB['month'])} {rng.randint(2010, 2025)}",
    "date": lambda s, rng: f"{rng.randint(1, 28)} {rng.choice(VOCAB['month'])} "
                           f"{rng.randint(2025, 2026)}",  # upcoming, seen from the timeline
    "past_date": lambda s, rng: f"{rng.randint(1, 28)} {rng.choice(VOCAB['month'])} "
                                f"{rng.randint(2021, 2024)}",
    "purchase": lambda s, rng: _priced(s, rng, "purchase"),
    "appliance": lambda s, rng: _priced(s, rng, "appliance"),
    "purchase_price": lambda s, rng: _price(s, rng, "purchase"),
    "appliance_price": lambda s, rng: _price(s, rng, "appliance"),
    "decision": lambda s, rng: rng.choice(PROJECT_DECISIONS[s["project"]]),
    "day": lambda s, rng: f"{rng.randint(1, 28)} {rng.choice(VOCAB['month'])}",
    "clock": lambda s, rng: _clock(rng),
    "clock_range": lambda s, rng: (lambda start: f"{_clock(rng, start, start + 1)} and "
                                   f"{_clock(rng, start + rng.randint(4, 12), start + 13)}")(
                                       rng.randrange(7 * 4, 18 * 4)),
    "eatery": lambda s, rng: f"{rng.choice(VOCAB['eatery_kind'])} "
                             f"{rng.choice(VOCAB['eatery_name'])}",
    "venue": lambda s, rng: f"the {rng.choice(VOCAB['venue_name'])} "
                            f"{rng.choice(VOCAB['venue_kind'])}",
    "place": lambda s, rng: f"the {rng.choice(VOCAB['place_kind'])} on "
                            f"{rng.choice(VOCAB['street'])}",
    "playlist": lambda s, rng: f"{rng.choice(VOCAB['adjective'])} {rng.choice(VOCAB['noun'])}",
    "book_title": lambda s, rng: _book(s, 0),
    "book_author": lambda s, rng: _book(s, 1),
}


def content(seed: int, k: int) -> dict:
    """What memory ``k`` says and the message that says it; duplicates reuse an earlier ``k``."""
    rng = random.Random(seed * 1_000_003 + k)
    slots = Slots(rng)
    if rng.random() < ATTRIBUTED_RATE:
        _, belief_type, subject, statement, message = rng.choices(
            ATTRIBUTED_TEMPLATES, cum_weights=ATTRIBUTED_WEIGHTS)[0]
        slots["person"]  # the sender is the first person the template names
        speaker = slots.people[0]
        sensitivity, negated = "sensitive", False
    else:
        _, belief_type, subject, statement, message, sensitivity, negated = rng.choices(
            TEMPLATES, cum_weights=TEMPLATE_WEIGHTS)[0]
        speaker = None
        if rng.random() < 0.1:  # occasionally more (or less) sensitive than the template default
            sensitivity = rng.choice(("public", "internal", "sensitive", "restricted"))
    parts = [message.format_map(slots)]
    cited = 0
    if rng.random() < SECOND_PART_RATE:  # small talk before or after the fact itself
        cited = rng.randrange(2)
        parts.insert(1 - cited, rng.choice(FILLERS).format_map(slots))
    statement = statement.format_map(slots)
    return {
        "speaker": speaker,
        "belief_type": belief_type,
        "subject": subject.format_map(slots),
        "statement": statement[0].upper() + statement[1:],
        "negated": negated,
        "sensitivity": sensitivity,
        "people": list(dict.fromkeys(slots.people)),  # mentioned people, in order, once each
        "parts": parts,
        "cited": cited,
    }


class Plan:
    """Deterministic layout of a bank: IDs, session times and per-session content."""

    def __init__(self, memories: int, seed: int, per_session: int) -> None:
        self.memories, self.seed, self.per_session = memories, seed, per_session
        self.sessions = max(1, math.ceil(memories / per_session))
        shortest = SESSION_JITTER_SECONDS + per_session * MAX_TURN_SECONDS + 600
        self.spacing = max(shortest, TIMELINE_SECONDS // self.sessions)
        # Expired memories must expire inside the timeline; future expiries lie beyond it.
        self.last_start_bound = BASE_EPOCH + (self.sessions - 1) * self.spacing
        self.end_bound = BASE_EPOCH + self.sessions * self.spacing
        self.prefix = hashlib.sha256(f"generate_bank/{seed}".encode()).hexdigest()[:8]

    def uid(self, kind: int, n: int) -> str:
        # A version-8 (custom layout) UUID: seed prefix, kind, then a per-kind counter.
        return f"{self.prefix}-{kind:04x}-8000-8000-{n:012x}"

    def person(self, index: int) -> str:
        return f"person:{self.uid(PERSON, index)}"

    def _session_rng(self, s: int) -> random.Random:
        return random.Random(self.seed * 7_368_787 + s)

    def session(self, s: int) -> tuple[dict, random.Random]:
        rng = self._session_rng(s)
        started = BASE_EPOCH + s * self.spacing + rng.randrange(SESSION_JITTER_SECONDS)
        sid = self.uid(SESSION, s)
        roll = rng.random()
        if roll < 0.1:
            scope = f"project:{rng.choice(PROJECTS)}"
        elif roll < 0.14:
            scope = f"session:{sid}"
        else:
            scope = "user"
        return {"id": sid, "scope": scope, "started_at": _iso(started)}, rng

    def turns(self, s: int):
        """Yield (events, memory) for every memory of session ``s``, in time order."""
        session, rng = self.session(s)
        sid, session_scope = session["id"], session["scope"]
        clock = BASE_EPOCH + s * self.spacing + SESSION_JITTER_SECONDS
        first = s * self.per_session
        for i in range(first, min(first + self.per_session, self.memories)):
            k = i
            if i >= 2 * self.per_session and rng.random() < DUPLICATE_RATE:
                k = i - rng.randint(self.per_session, min(i, 20 * self.per_session))
            c = content(self.seed, k)
            events = []
            proposal = None
            if c["speaker"] is None and rng.random() < CONFIRMED_RATE:
                clock += rng.randint(*ASSISTANT_GAP_SECONDS)
                proposal = self._event(sid, "assistant", clock, [
                    rng.choice(PROPOSALS).format(subject=c["subject"])], i, offset=1)
                events.append(proposal)
                c["parts"] = ["Yes, please remember that."] + c["parts"]
                c["cited"] += 1
            clock += rng.randint(*EVENT_GAP_SECONDS)
            speaker = "owner" if c["speaker"] is None else self.person(c["speaker"])
            event = self._event(sid, speaker, clock, c["parts"], i)
            events.append(event)
            memory = self._memory(i, c, event, proposal, rng, sid, session_scope, clock)
            if rng.random() < ASSISTANT_REPLY_RATE:
                clock += rng.randint(*ASSISTANT_GAP_SECONDS)
                events.append(self._event(sid, "assistant", clock, [
                    rng.choice(ASSISTANT_REPLIES).format(subject=c["subject"])], i, offset=2))
            yield events, memory

    def _event(self, sid: str, speaker: str, at: int, texts: list[str], i: int,
               offset: int = 0) -> dict:
        n = 4 * i + offset  # room for the owner message, a proposal and a reply per memory
        return {
            "id": self.uid(EVENT, n),
            "session": sid,
            "kind": "assistant.message.created" if speaker == "assistant"
            else "user.message.created",
            "speaker": speaker,
            "created_at": _iso(at),
            "parts": [{"id": self.uid(PART, 4 * n + j), "text": t} for j, t in enumerate(texts)],
        }

    def _memory(self, i, c, event, proposal, rng, sid, session_scope, at) -> dict:
        attributed = c["speaker"] is not None
        sources = [{"event": event["id"], "part": event["parts"][c["cited"]]["id"]}]
        if proposal:
            sources.insert(0, {"event": proposal["id"], "part": proposal["parts"][0]["id"]})
        if attributed:
            derivation, authority, confidence = "extracted", "EXTRACTED", rng.uniform(0.7, 0.9)
            scope = f"session:{sid}"
        else:
            roll = rng.random()
            if proposal:
                derivation, authority, confidence = "explicit", "AFFIRMED", rng.uniform(0.9, 1)
            elif roll < PROBABILITY_INFERRED:
                derivation, authority, confidence = "inferred", "INFERRED", rng.uniform(0.4, 0.75)
            elif roll < PROBABILITY_INFERRED + PROBABILITY_EXTRACTED:
                derivation, authority, confidence = "extracted", "EXTRACTED", rng.uniform(0.65, 0.9)
            else:
                derivation, authority, confidence = "explicit", "USER", rng.uniform(0.85, 1)
            scope = "user"
            if session_scope.startswith("project:") and rng.random() < 0.5:
                scope = session_scope
            elif session_scope.startswith("session:") and rng.random() < 0.3:
                scope = session_scope
        sensitivity = c["sensitivity"]
        status, expires = "active", None
        roll = rng.random()
        if attributed:
            pass  # forwarded messages stay active and unexpiring: simpler to reason about
        elif roll < RETRACTED_RATE:
            status = "retracted"
        elif roll < RETRACTED_RATE + EXPIRED_RATE and at + 86400 < self.last_start_bound:
            status = "expired"
            expires = min(at + rng.randint(1, 30) * 86400, self.last_start_bound)
        elif roll < RETRACTED_RATE + EXPIRED_RATE + FUTURE_EXPIRY_RATE:
            expires = self.end_bound + rng.randint(30, 720) * 86400
        recorded = at + rng.randint(*RECORDING_LAG_SECONDS)
        people = ([c["speaker"]] if attributed else []) + [
            p for p in c["people"] if p != c["speaker"]]
        return {
            "id": self.uid(MEMORY, i),
            "subject": c["subject"],
            "statement": c["statement"],
            "belief_type": c["belief_type"],
            "claim_kind": "claim",
            "polarity": "negated" if c["negated"] else "affirmed",
            "derivation": derivation,
            "attribution": self.person(c["speaker"]) if attributed else "owner",
            "authority": authority,
            "sensitivity": sensitivity,
            "scope": scope,
            "portable": not attributed and not scope.startswith("session:")
            and sensitivity != "restricted",
            "confidence": round(confidence, 2),
            "evidence_at": event["created_at"],
            "valid_from": event["created_at"],
            "expires_at": _iso(expires) if expires else None,
            "entity_ids": [self.person(p) for p in people],
            "status": status,
            "created_at": _iso(recorded),
            "sources": sources,
        }


def write(plan: Plan, handle, spool_dir: Path) -> dict:
    """Write the document object by object; return counts for the summary line.

    Events and memories are generated together, turn by turn, but live in separate arrays: the
    events go straight to ``handle`` while the memories wait in a temporary spool file that is
    appended afterwards, so neither the bank nor its JSON text is ever held in memory.
    """
    dump = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    counts = {"events": 0, "attributed": 0}

    def array(name: str, items) -> None:
        handle.write(f'"{name}":[\n')
        handle.write(",\n".join(dump(item) for item in items))
        handle.write("\n],\n")

    handle.write(f'{{"format":{dump(FORMAT)},\n')
    array("people", ({"id": plan.uid(PERSON, i), "name": name} for i, name in enumerate(PEOPLE)))
    array("sessions", (plan.session(s)[0] for s in range(plan.sessions)))

    with tempfile.TemporaryFile("w+", encoding="utf-8", dir=spool_dir) as spool:
        handle.write('"events":[\n')
        event_separator = memory_separator = ""
        for s in range(plan.sessions):
            for events, memory in plan.turns(s):
                for event in events:
                    handle.write(event_separator + dump(event))
                    event_separator = ",\n"
                spool.write(memory_separator + dump(memory))
                memory_separator = ",\n"
                counts["events"] += len(events)
                counts["attributed"] += memory["attribution"] != "owner"
        handle.write('\n],\n"memories":[\n')
        spool.seek(0)
        shutil.copyfileobj(spool, handle, 1 << 20)
    handle.write("\n]}\n")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--memories", type=int, required=True, help="number of memories")
    parser.add_argument("--output", type=Path, required=True, help="file to write")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--per-session", type=int, default=50, help="memories per session")
    parser.add_argument("--check", action="store_true",
                        help="re-read the written file and validate it (slower, needs RAM)")
    args = parser.parse_args(argv)
    if args.memories < 1 or args.per_session < 1:
        parser.error("--memories and --per-session must be positive")

    started = time.perf_counter()
    plan = Plan(args.memories, args.seed, args.per_session)
    partial = args.output.with_name(args.output.name + ".partial")
    with open(partial, "w", encoding="utf-8", buffering=1 << 20) as handle:
        counts = write(plan, handle, partial.parent)
    os.replace(partial, args.output)
    elapsed = time.perf_counter() - started

    checked = ""
    if args.check:
        summary = check(load_strict(args.output))
        assert summary["memories"] == args.memories, summary
        checked = f", checked ({summary['duplicate_pairs']} exact duplicates)"
    print(
        f"wrote {args.output}: {args.memories} memories, {plan.sessions} sessions, "
        f"{counts['events']} events, {len(PEOPLE)} people, {counts['attributed']} attributed, "
        f"seed {args.seed}, {elapsed:.1f}s{checked}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
