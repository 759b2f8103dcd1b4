"""Look-alike bank: statement pairs that share their words but must never merge
(``python -m evals.reconsolidation.lookalike_bank``).

Written before the paraphrase guards learned word meaning (issue 31), as the test any
loosening must keep passing: every pair shares all but one word or phrase, and the one that
differs changes the claim. Kinds (``KINDS``):

* ``antonym`` — opposite words (loves/hates, buys/sells, starts/finishes);
* ``co_hyponym`` — siblings under one kind (cat/dog, tea/coffee, car/truck, city/town);
* ``part_whole`` — a part for its whole (finger/hand, kitchen/house, key/car);
* ``hypernym`` — a word for its kind or an instance of it, which changes what is claimed
  (poodle/dog, apples/fruit, likes/loves, wants/needs);
* ``role`` — a changed role or relation (employer/employee, teacher/student, who reports
  to whom — the same words in another order, or a passive's "by" that is not who acts first
  on the other side ("is paid by Meridian" / "pays Meridian"), or who is after a preposition
  ("Sam is kind to the owner" / "the owner is kind to Sam") or acts after "is unable to",
  which the guards once merged: ``@11``); "leaves for Oslo" / "leaves Oslo", which the
  guards once merged: ``lookalike-bank@6``; a verb and its possessed agent noun, "trains
  Sam" / "the owner's trainer is Sam", which they merged too: ``@7``);
* ``polysemy`` — two words that share only a rarer sense (want/need share "require");
* ``affix`` — a word inside a longer, unrelated word (car/carpet, pen/penguin,
  account/accountant): the guards once accounted for any word a longer one began or ended
  with (``lookalike-bank@3``);
* ``light_verb`` — two different light verbs with one object ("makes bread" / "has
  bread", "goes to Paris" / "has Paris"): the guards once ignored light verbs altogether
  (``lookalike-bank@3``);
* ``reference`` — a function word that changes what is said ("here"/"there", "him"/"her",
  "who"/"where", "and"/"or"), which the guards once skipped (``lookalike-bank@3``);
* ``order`` — the same words on the other side of "than", "but", "over" or "from ... to"
  ("taller than Ana" / "Ana is taller than"): the guards once compared words as sets
  (``lookalike-bank@3``);
* ``construction`` — beside the constructions the guards read as "is" ("was born",
  "falls on" a date, "a member of", "works at" a name, "follows a vegan diet", "suffers from",
  a participle after a present "is": "is based in"; "expires in" a date as "is valid until";
  "goes to work by bike" as "cycles", "takes the bus" and "catches the train" as "by bus" and
  "by train"; "a nurse by profession" as "a nurse"; "on their own" and "by themselves" as
  "alone", "works from home" as "works remotely", "speaks fluent Spanish" as "is fluent in
  Spanish", "next to" as "beside"; a present passive with "by" a person, "the owner's car is
  serviced by Joost", as the active, "Joost services the owner's car"; British "has got a
  cat" as "has a cat"; "doesn't have" as "has no"; "at the moment" as "currently"; "has to",
  "ought to" and "is able to" as "must", "should" and "can"; "the name of the cat is" as
  "the cat is called"; "is employed by" a name as
  "works at" it, "is employed as" as "works as"; "goes by" a name as "is called" it; "X's home
  is in" a place as "X lives in" it; "X's age is 40" and "is aged 40" as "is 40"), a changed
  person, time, status or thing (added with those readings, ``lookalike-bank@2``; diets,
  "suffers from" and participles ``@4``; expiry and travel by bike ``@5``; employment ``@6``;
  names, homes and ages ``@8``; "employed as" ``@9``; public transport and "by profession"
  ``@10``; "alone", "remotely", "fluent", "beside", passives, "has got", "doesn't have", "at
  the moment" and modals said with "to" ``@11``);
* ``variant`` — beside the words the guards read as one (two forms of one verb, whose
  tense must still be read: "died" / "dies", "fed" / "feeds", which the guards once merged,
  ``@8``; informal relation words,
  "mum"/"mother"; "every day"/"daily", "twice"/"two times"; British and American
  spellings; "can't"/"cannot"; "is called", "X's name is"; "34 years old"; "normally";
  "comes from"; "works as"; "intolerant"/"intolerance"; "goes to"/"attends"; "hopes to",
  "wishes to" and "would love to" as "wants to"; "7 pm" as 19:00; British and American
  words, "flat"/"apartment"; "is going to" before a verb, and "is moving" with a time
  ahead, as "will"; "is fond of" as "likes"; "afraid" and "frightened" as "scared";
  "enjoys", "resides", "requires", "relocated", "aim" and "objective", "departs" and "has a
  fear of" as "likes", "lives", "needs", "moved", "goal", "leaves" and "is scared of"; "is a
  fan of" as "likes"; "would rather" as "prefers"; "intends" as "plans"; "is unable to" as
  "cannot"; "seldom" and "occasionally" as "rarely" and "sometimes"; "noon" and "midday" as 12:00;
  "half an hour", "half past seven", "a quarter to nine" and "6 a.m." as their figures; "every
  other week" and "fortnightly" as "every two weeks"; "more than 5,000" as "over 5,000", "or
  so" as "about"; "the owner's usual bedtime" as "usually goes to bed"), a changed relation, period, tense,
  number of people or word (``lookalike-bank@3``; volition, clock times and dialect words
  ``@4``; the future and plainer words ``@5``; formal words ``@6``; "a fan of", "would
  rather", "intends" and "unable" ``@8``; "seldom", "occasionally" ``@10``; "noon", durations and clock times in words ``@11``).

General English, not the corpus's phrasing: no pair is taken from the reconsolidation
corpus. Scored through the real rules provider (``rules.propose``) exactly as the
paraphrase bank's look-alikes (``paraphrase_bank``): one case per pair, the count of merged
pairs must be 0. Output: one JSON document with the code identity of the run
(``--output`` writes it, exclusively).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from evals import django_ready  # noqa: F401  (configures Django before the app imports below)
from evals.recall.report import code_identity
from evals.reconsolidation.paraphrase_bank import _components, _view
from reconsolidation.providers.rules import provider as rules

VERSION = "lookalike-bank@11"
KINDS = ("antonym", "co_hyponym", "part_whole", "hypernym", "role", "polysemy", "affix", "light_verb", "reference",
         "order", "construction", "variant")

# (kind, a, b) — each pair must never merge.
PAIRS = [
    ("antonym", "The owner loves jazz.", "The owner hates jazz."),
    ("antonym", "The owner buys vintage furniture.", "The owner sells vintage furniture."),
    ("antonym", "The owner prefers hot showers.", "The owner prefers cold showers."),
    ("antonym", "The owner's flat is big.", "The owner's flat is small."),
    ("antonym", "The owner starts work at nine.", "The owner finishes work at nine."),
    ("antonym", "The owner remembers the alarm code.", "The owner forgets the alarm code."),
    ("antonym", "The owner accepted the job offer.", "The owner rejected the job offer."),
    ("antonym", "The owner's team won the final.", "The owner's team lost the final."),
    ("antonym", "The owner lends money to Sam.", "The owner borrows money to Sam."),
    ("antonym", "The owner finds the commute easy.", "The owner finds the commute hard."),
    ("antonym", "The owner likes quiet restaurants.", "The owner dislikes quiet restaurants."),
    ("antonym", "The owner arrives in Oslo on Friday.", "The owner leaves Oslo on Friday."),
    ("co_hyponym", "The owner has a pet rabbit.", "The owner has a pet hamster."),
    ("co_hyponym", "The owner drinks coffee at breakfast.", "The owner drinks tea at breakfast."),
    ("co_hyponym", "The owner plays guitar in a band.", "The owner plays drums in a band."),
    ("co_hyponym", "The owner drives a car to work.", "The owner drives a truck to work."),
    ("co_hyponym", "The owner lives in a big city.", "The owner lives in a big town."),
    ("co_hyponym", "The owner's favourite fruit is mango.", "The owner's favourite fruit is papaya."),
    ("co_hyponym", "The owner plays tennis at weekends.", "The owner plays squash at weekends."),
    ("co_hyponym", "The owner eats salmon for dinner.", "The owner eats tuna for dinner."),
    ("co_hyponym", "The owner is afraid of wasps.", "The owner is afraid of bees."),
    ("co_hyponym", "The owner keeps the passport in the drawer.", "The owner keeps the passport in the cupboard."),
    ("co_hyponym", "The owner talks to the plants.", "The owner sings to the plants."),
    ("co_hyponym", "The owner's cat is a Siamese.", "The owner's dog is a Siamese."),
    ("part_whole", "The owner broke a finger while climbing.", "The owner broke a hand while climbing."),
    ("part_whole", "The owner painted the kitchen.", "The owner painted the house."),
    ("part_whole", "The owner lost the car key.", "The owner lost the car."),
    ("part_whole", "The owner's wrist hurts.", "The owner's arm hurts."),
    ("part_whole", "The owner replaced the bike's wheel.", "The owner replaced the bike's saddle."),
    ("part_whole", "The owner cleaned the roof.", "The owner cleaned the chimney."),
    ("hypernym", "The owner is allergic to dogs.", "The owner is allergic to animals."),
    ("hypernym", "The owner eats apples every day.", "The owner eats fruit every day."),
    ("hypernym", "The owner owns a poodle.", "The owner owns a dog."),
    ("hypernym", "The owner drinks wine with dinner.", "The owner drinks alcohol with dinner."),
    ("hypernym", "The owner plays the violin.", "The owner plays an instrument."),
    ("hypernym", "The owner likes jazz.", "The owner loves jazz."),
    ("hypernym", "The owner is afraid of spiders.", "The owner is afraid of insects."),
    ("hypernym", "The owner walks to the office.", "The owner travels to the office."),
    ("hypernym", "The owner hopes to visit Japan.", "The owner plans to visit Japan."),
    ("hypernym", "The owner's car is a sedan.", "The owner's car is a vehicle."),
    ("role", "The owner is Priya's employer.", "The owner is Priya's employee."),
    ("role", "The owner is a teacher at the conservatory.", "The owner is a student at the conservatory."),
    ("role", "Sam reports to the owner.", "The owner reports to Sam."),
    ("role", "Priya hired the owner.", "The owner hired Priya."),
    ("role", "The owner is Sam's tenant.", "The owner is Sam's landlord."),
    ("role", "The owner coaches the football team.", "The owner plays in the football team."),
    ("role", "The owner is the buyer of the boat.", "The owner is the seller of the boat."),
    ("role", "The owner is the patient of Dr. Okafor.", "The owner is the doctor of Dr. Okafor."),
    ("polysemy", "The owner wants a new laptop.", "The owner needs a new laptop."),
    ("polysemy", "The owner calls the bank on Mondays.", "The owner names the bank on Mondays."),
    ("polysemy", "The owner runs a bakery.", "The owner manages a bakery."),
    ("polysemy", "The owner's sister is a nurse.", "The owner's sister is a nanny."),
    ("polysemy", "The owner sees a therapist.", "The owner dates a therapist."),
    ("polysemy", "The owner keeps bees.", "The owner sells bees."),
    ("affix", "The owner's car is red.", "The owner's carpet is red."),
    ("affix", "The owner has a pen.", "The owner has a penguin."),
    ("affix", "The owner has an account.", "The owner has an accountant."),
    ("affix", "The owner likes the band.", "The owner likes the bandage."),
    ("affix", "The owner keeps a cat.", "The owner keeps a catalogue."),
    ("affix", "The owner has a dog.", "The owner has a dogsled."),
    ("affix", "The owner's book is oak.", "The owner's bookcase is oak."),
    ("affix", "The owner has a play.", "The owner has playtime."),
    ("light_verb", "The owner makes bread.", "The owner has bread."),
    ("light_verb", "The owner goes to Paris.", "The owner has Paris."),
    ("light_verb", "The owner takes vitamin D.", "The owner makes vitamin D."),
    ("light_verb", "The owner keeps a diary.", "The owner takes a diary."),
    ("light_verb", "The owner gets headaches.", "The owner makes headaches."),
    ("light_verb", "The owner puts sugar in coffee.", "The owner takes sugar in coffee."),
    ("light_verb", "The owner does the dishes on Sundays.", "The owner makes the dishes on Sundays."),
    ("light_verb", "The owner went to Paris.", "The owner had Paris."),
    ("light_verb", "The owner made bread.", "The owner had bread."),
    ("reference", "The owner calls him on Sundays.", "The owner calls her on Sundays."),
    ("reference", "The owner lives here.", "The owner lives there."),
    ("reference", "The owner's son likes his teacher.", "The owner's son likes her teacher."),
    ("reference", "The owner knows who Sam is.", "The owner knows where Sam is."),
    ("reference", "The owner drives to Utrecht and Amsterdam.", "The owner drives to Utrecht or Amsterdam."),
    ("order", "The owner eats fish but not meat.", "The owner eats meat but not fish."),
    ("order", "The owner prefers tea over coffee.", "The owner prefers coffee over tea."),
    ("order", "The owner likes cats more than dogs.", "The owner likes dogs more than cats."),
    ("order", "The owner is taller than Ana.", "Ana is taller than the owner."),
    ("order", "The owner works from 9:00 to 17:00.", "The owner works from 17:00 to 9:00."),
    ("order", "The owner's flight goes from Amsterdam to Lisbon.", "The owner's flight goes from Lisbon to Amsterdam."),
    ("construction", "The owner's daughter was born on 3 May.", "The owner's birthday is on 3 May."),
    ("construction", "The owner was born in Lisbon.", "The owner lived in Lisbon."),
    ("construction", "Sam's birthday is on 2 May.", "Sam's son was born on 2 May."),
    ("construction", "Sam was born in Ghent.", "Sam's mother was born in Ghent."),
    ("construction", "The festival falls on 3 June.", "The festival fell on 3 June."),
    ("construction", "The owner's birthday falls on 2 May.", "The owner's birthday party is on 2 May."),
    ("construction", "The owner's cat falls on the sofa.", "The owner's cat is on the sofa."),
    ("construction", "The owner belongs to the tennis club.", "The owner's son is a member of the tennis club."),
    ("construction", "The owner is a member of the tennis club.", "The owner was a member of the tennis club."),
    ("construction", "The owner belongs to the tennis club.", "The owner belongs to the tennis team."),
    ("construction", "The owner works at Meridian.", "The owner's employer works at Meridian."),
    ("construction", "The owner works for Sam.", "The owner is Sam's employer."),
    ("construction", "The owner works at Sam's.", "The owner is Sam's employer."),
    ("construction", "The owner works at Meridian.", "The owner's former employer is Meridian."),
    ("construction", "The owner is retired.", "The owner retired."),
    ("construction", "The owner is married to Sam.", "The owner married Sam."),
    ("construction", "The table is made of oak.", "The table was made of oak."),
    ("construction", "The owner is based in Porto.", "The owner was based in Porto."),
    ("construction", "The owner is self-employed.", "The owner was self-employed."),
    ("construction", "The owner suffers from migraines.", "The owner suffered from migraines."),
    ("construction", "The owner suffers from migraines.", "The owner causes migraines."),
    ("construction", "The owner suffers from hay fever.", "The owner's son has hay fever."),
    ("construction", "The owner's car is being repaired.", "The owner's car is repaired."),
    ("construction", "The owner's flat is where Sam lived.", "The owner's flat is where Sam lives."),
    ("construction", "The owner is interested in chess.", "The owner used to be interested in chess."),
    ("construction", "The owner has been living in Porto.", "The owner lives in Porto."),
    ("construction", "The owner has been married to Sam for ten years.", "The owner is married to Sam for ten years."),
    ("construction", "The owner is on a low-carb diet.", "The owner cooks a low-carb diet."),
    ("construction", "The owner follows a low-carb diet.", "The owner's husband is on a low-carb diet."),
    ("construction", "The owner follows a vegetarian diet.", "The owner follows a vegan diet."),
    ("construction", "The owner follows a vegan diet.", "The owner is vegetarian."),
    ("construction", "The owner followed a vegetarian diet.", "The owner is vegetarian."),
    ("construction", "The owner follows a strict diet.", "The owner is strict."),
    ("construction", "The owner follows a vegetarian diet.", "The owner cooks vegetarian food."),
    ("construction", "The owner is on a vegan diet.", "The owner's daughter is vegan."),
    ("variant", "The owner wakes up at 7 pm.", "The owner wakes up at 7 am."),
    ("variant", "The owner wakes up at 7 pm.", "The owner wakes up at 7:00."),
    ("variant", "The owner eats at 6 o'clock.", "The owner eats at 18:00."),
    ("variant", "The owner rents a flat in Leeds.", "The owner rents a house in Leeds."),
    ("variant", "The owner's flat is in Leeds.", "The owner's office is in Leeds."),
    ("variant", "The owner is on holiday in Spain.", "The owner was on vacation in Spain."),
    ("order", "The owner prefers tea over coffee.", "The owner prefers coffee to tea."),
    ("variant", "The owner hopes to visit Rome.", "The owner plans to visit Rome."),
    ("variant", "The owner wishes to move to Porto.", "The owner expects to move to Porto."),
    ("variant", "The owner would love to visit Rome.", "The owner loves to visit Rome."),
    ("variant", "The owner would love to sing in a choir.", "The owner would hate to sing in a choir."),
    ("variant", "The owner hopes to visit Rome.", "The owner hoped to visit Rome."),
    ("variant", "The owner hopes to leave Oslo.", "The owner wants to visit Oslo."),
    ("variant", "The owner wants to see the northern lights.", "The owner dreams about the northern lights."),
    ("variant", "The owner dreams of sailing to Norway.", "The owner dreamt of sailing to Norway."),
    ("variant", "The owner's mum lives in Porto.", "The owner's dad lives in Porto."),
    ("variant", "The owner's grandma lives in Ghent.", "The owner's grandpa lives in Ghent."),
    ("variant", "The owner has two kids.", "The owner has two grandchildren."),
    ("variant", "The owner walks every day.", "The owner walks every other day."),
    ("variant", "The owner walks every day.", "The owner walks weekly."),
    ("variant", "The owner runs twice a week.", "The owner runs 2 km a week."),
    ("variant", "The owner took a day off.", "The owner takes a day off daily."),
    ("variant", "The owner once lived in Paris.", "The owner lived in Paris once a year."),
    ("variant", "The owner visits the centre every week.", "The owner visits the center every month."),
    ("variant", "The owner's favourite colour is green.", "The owner's favourite flavour is green."),
    ("variant", "The owner called Sam.", "The owner is Sam."),
    ("variant", "The owner's friend called Ana.", "The owner's friend is Ana."),
    ("variant", "The owner has a cat called Miso.", "The owner has a dog called Miso."),
    ("variant", "The owner can't swim.", "The owner can swim."),
    ("variant", "The owner's son is 7.", "The owner's son is 7 months old."),
    ("variant", "The owner usually takes the train.", "The owner rarely takes the train."),
    ("variant", "The owner is from Porto.", "The owner came from Porto."),
    ("variant", "The owner is a teacher.", "The owner worked as a teacher."),
    ("variant", "The owner jogs every morning.", "The owner jogged every morning."),
    ("variant", "The owner's son's name is Sam.", "The owner's name is Sam."),
    ("variant", "The owner's sisters live in Ghent.", "The owner's sister lives in Ghent."),
    ("variant", "The owner is lactose intolerant.", "The owner is gluten intolerant."),
    ("variant", "The owner's daughter attends the Montessori school.",
     "The owner's daughter leaves the Montessori school."),
    ("variant", "The owner is going to move to Lisbon.", "The owner was going to move to Lisbon."),
    ("variant", "The owner is going to sell the boat.", "The owner might sell the boat."),
    ("variant", "The owner is going to sell the boat.", "The owner is going to buy the boat."),
    ("variant", "The owner is going to the gym.", "The owner will go to the gym."),
    ("variant", "The owner's son is going to study law.", "The owner's daughter will study law."),
    ("variant", "The owner is moving to Lisbon.", "The owner will move to Lisbon."),
    ("variant", "The owner is starting a new job next month.", "The owner started a new job last month."),
    ("variant", "The owner is visiting Rome tomorrow.", "The owner might visit Rome tomorrow."),
    ("variant", "The owner is fond of jazz.", "The owner loves jazz."),
    ("variant", "The owner is fond of jazz.", "The owner was fond of jazz."),
    ("variant", "The owner is scared of spiders.", "The owner is terrified of spiders."),
    ("variant", "The owner's daughter is afraid of dogs.", "The owner's daughter scared the dogs."),
    ("construction", "The owner's passport expires in March 2028.", "The owner's passport expired in March 2018."),
    ("construction", "The owner's passport expires in March 2028.", "The owner's visa is valid until March 2028."),
    ("construction", "The owner's lease expires in two years.", "The owner's lease is valid for two years."),
    ("construction", "The owner's warranty expires in June 2027.", "The owner's warranty starts in June 2027."),
    ("construction", "The owner cycles to the office.", "The owner goes to the office by car."),
    ("construction", "The owner cycles to the office.", "The owner went to the office by bike."),
    ("construction", "The owner cycles to the office.", "The owner's son goes to school by bike."),
    ("construction", "The owner cycles to the office.", "The owner sells bikes at the office."),
    ("construction", "The owner takes the bus to work.", "The owner takes the train to work."),
    ("construction", "The owner takes the bus to work.", "The owner took the bus to work."),
    ("construction", "The owner takes the bus to work.", "The owner drives the bus to work."),
    ("construction", "The owner takes the bus to work.", "The owner misses the bus to work."),
    ("construction", "The owner takes the bus to work.", "The owner's son takes the bus to work."),
    ("construction", "The owner takes the bus to work.", "The owner takes the bus from work."),
    ("construction", "The owner goes to work by bus.", "The owner goes to work by car."),
    ("construction", "The owner goes to work by bus.", "The owner takes the bus pass to work."),
    ("construction", "The owner goes to work by train.", "The owner takes the night train to work."),
    ("construction", "The owner catches the 8:10 train.", "The owner catches the 8:40 train."),
    ("construction", "The owner is a nurse by profession.", "The owner is a nurse by training."),
    ("construction", "The owner is a nurse by profession.", "The owner was a nurse by profession."),
    ("construction", "The owner is a nurse by profession.", "The owner's sister is a nurse by profession."),
    ("construction", "The owner lives alone.", "The owner lives on their own boat."),
    ("construction", "The owner lives alone.", "The owner lives by the sea."),
    ("construction", "The owner lives alone.", "The owner's mother lives on her own."),
    ("construction", "The owner lives on their own.", "The owner lived on their own."),
    ("construction", "The owner lives on their own.", "The owner travels on their own."),
    ("construction", "The owner works from home.", "The owner works from the office."),
    ("construction", "The owner works from home.", "The owner worked from home."),
    ("construction", "The owner works from home.", "The owner's partner works remotely."),
    ("construction", "The owner works remotely.", "The owner works from home on Fridays."),
    ("construction", "The owner is fluent in Spanish.", "The owner speaks basic Spanish."),
    ("construction", "The owner is fluent in Spanish.", "The owner spoke fluent Spanish."),
    ("construction", "The owner is fluent in Spanish.", "The owner writes fluent Spanish."),
    ("construction", "The owner is fluent in Spanish.", "The owner's son speaks fluent Spanish."),
    ("construction", "The owner speaks fluent Spanish.", "The owner is not fluent in Spanish."),
    ("variant", "The owner has lunch at noon.", "The owner has lunch at 12:30."),
    ("variant", "The owner has lunch at noon.", "The owner has lunch at midnight."),
    ("variant", "The owner has lunch at noon.", "The owner has lunch in the afternoon."),
    ("variant", "The owner has lunch at midday.", "The owner has lunch around 12:00."),
    ("variant", "The owner meditates for half an hour.", "The owner meditates for an hour."),
    ("variant", "The owner meditates for half an hour.", "The owner meditates for 20 minutes."),
    ("variant", "The owner sleeps for an hour and a half.", "The owner sleeps for an hour."),
    ("variant", "The owner eats half an apple.", "The owner eats an apple."),
    ("variant", "The owner leaves home at half past seven.", "The owner leaves home at 7:00."),
    ("variant", "The owner leaves home at half past seven.", "The owner leaves home at 8:30."),
    ("variant", "The owner leaves home at quarter past eight.", "The owner leaves home at quarter to eight."),
    ("variant", "The owner leaves home at a quarter to nine.", "The owner leaves home at 9:15."),
    ("variant", "The owner wakes up at 6 a.m.", "The owner wakes up at 6 p.m."),
    ("variant", "The owner visits their parents every other week.", "The owner visits their parents every week."),
    ("variant", "The owner visits their parents every other week.",
     "The owner visits their parents every other month."),
    ("variant", "The owner visits their parents fortnightly.", "The owner visits their parents weekly."),
    ("variant", "The owner visits their parents every other week.",
     "The owner visits their parents every three weeks."),
    ("variant", "The owner visits their parents every other weekend.", "The owner visits their parents every weekend."),
    ("construction", "The owner lives next to a park.", "The owner lives near a park."),
    ("construction", "The owner lives next to a park.", "The owner lives opposite a park."),
    ("construction", "The owner lives next to a park.", "The owner lived next to a park."),
    ("construction", "The owner lives next to a park.", "The owner lives next to a school."),
    ("role", "The owner is paid by Meridian.", "The owner pays Meridian."),
    ("role", "The owner is coached by Sam.", "The owner coaches Sam."),
    ("role", "The owner's garden is maintained by Joost.", "The owner maintains Joost's garden."),
    ("role", "The owner's garden is maintained by Joost.", "Joost's garden is maintained by the owner."),
    ("role", "The owner's garden is maintained by a gardener.", "The owner maintains a gardener's garden."),
    ("role", "The owner is employed by Meridian.", "Meridian is employed by the owner."),
    ("construction", "The owner's report is finished by Friday.", "The owner finishes the report on Friday."),
    ("construction", "The owner's garden is maintained by Joost.", "Joost maintained the owner's garden."),
    ("construction", "The owner's garden is maintained by Joost.", "Sam maintains the owner's garden."),
    ("construction", "The owner has got a cat.", "The owner got a cat."),
    ("construction", "The owner has got a cat.", "The owner had a cat."),
    ("construction", "The owner has got married.", "The owner is married."),
    ("construction", "The owner doesn't have a car.", "The owner has a car."),
    ("construction", "The owner doesn't have a car.", "The owner didn't have a car."),
    ("construction", "The owner doesn't make bread.", "The owner has no bread."),
    ("construction", "The owner lives in Porto at the moment.", "The owner now lives in Porto."),
    ("construction", "The owner lives in Porto at the moment.", "The owner lived in Porto at the moment."),
    ("role", "Sam is unable to visit the owner.", "The owner cannot visit Sam."),
    ("role", "Sam is able to visit the owner.", "The owner can visit Sam."),
    ("role", "Sam has to visit the owner.", "The owner must visit Sam."),
    ("role", "Sam is kind to the owner.", "The owner is kind to Sam."),
    ("role", "Sam is grateful to the owner.", "The owner is grateful to Sam."),
    ("role", "Sam is loyal to the owner.", "The owner is loyal to Sam."),
    ("variant", "The owner has to leave early.", "The owner can leave early."),
    ("variant", "The owner has to leave early.", "The owner had to leave early."),
    ("variant", "The owner is able to swim.", "The owner was able to swim."),
    ("variant", "The owner is able to swim.", "The owner cannot swim."),
    ("variant", "The owner ought to drink more water.", "The owner must drink more water."),
    ("variant", "The owner earns more than 5,000 euros a month.", "The owner earns less than 5,000 euros a month."),
    ("variant", "The owner earns more than 5,000 euros a month.", "The owner earns 5,000 euros a month."),
    ("variant", "The owner likes tea more than coffee.", "The owner likes tea over coffee."),
    ("variant", "The owner sleeps for seven hours or so.", "The owner sleeps for seven hours."),
    ("variant", "The owner sleeps for seven hours or so.", "The owner sleeps for seven or eight hours."),
    ("variant", "The owner's usual bedtime is 23:00.", "The owner sometimes goes to bed at 23:00."),
    ("variant", "The owner's usual bedtime is 23:00.", "The owner's usual bedtime was 23:00."),
    ("variant", "The owner's usual bedtime is 23:00.", "The owner's son's usual bedtime is 23:00."),
    ("variant", "The owner's typical breakfast is porridge.", "The owner rarely has porridge for breakfast."),
    ("construction", "The name of the owner's cat is Miso.", "The owner's dog is called Miso."),
    ("construction", "The name of the owner's cat is Miso.", "The name of the owner's cat was Miso."),
    ("construction", "The name of the owner's cat is Miso.", "The owner is called Miso."),
    ("construction", "The owner forgot the name of the cat.", "The owner forgot the cat."),
    ("variant", "The owner seldom eats meat.", "The owner never eats meat."),
    ("variant", "The owner seldom eats meat.", "The owner sometimes eats meat."),
    ("variant", "The owner occasionally swims.", "The owner often swims."),
    ("variant", "The owner occasionally swims.", "The owner usually swims."),
    ("variant", "The owner enjoys cooking.", "The owner loves cooking."),
    ("variant", "The owner enjoys cooking.", "The owner enjoyed cooking."),
    ("variant", "The owner likes cooking.", "The owner enjoys baking."),
    ("variant", "The owner resides in Porto.", "The owner's sister lives in Porto."),
    ("variant", "The owner resides in Porto.", "The owner lives near Porto."),
    ("variant", "The owner requires reading glasses.", "The owner wants reading glasses."),
    ("variant", "The owner requires a visa for Brazil.", "The owner does not need a visa for Brazil."),
    ("variant", "The owner relocated to Utrecht in 2019.", "The owner moved from Utrecht in 2019."),
    ("variant", "The owner relocated to Utrecht in 2019.", "The owner is moving to Utrecht."),
    ("variant", "The owner's goal is to run a marathon.", "The owner's dream is to run a marathon."),
    ("variant", "The owner aims to run a marathon.", "The owner's goal was to run a marathon."),
    ("variant", "The owner's aim is to run a marathon.", "The owner's son's goal is to run a marathon."),
    ("variant", "The owner's flight departs at 9:40.", "The owner's flight arrives at 9:40."),
    ("variant", "The owner's flight departs at 9:40.", "The owner's train leaves at 9:40."),
    ("variant", "The owner departs for Oslo on Friday.", "The owner leaves Oslo on Friday."),
    ("variant", "The owner has a fear of heights.", "The owner is terrified of heights."),
    ("variant", "The owner has a fear of heights.", "The owner had a fear of heights."),
    ("role", "The owner leaves for Oslo on Friday.", "The owner leaves Oslo on Friday."),
    ("role", "The owner voted for Sam.", "The owner voted Sam."),
    ("role", "The owner trains Sam.", "The owner's trainer is Sam."),
    ("role", "The owner drives Sam.", "The owner's driver is Sam."),
    ("role", "The owner employs Sam.", "The owner's employer is Sam."),
    ("role", "The owner cleans for Sam.", "The owner's cleaner is Sam."),
    ("role", "The owner teaches Ana.", "The owner's teacher is Ana."),
    ("role", "The owner manages Sam.", "The owner's manager is Sam."),
    ("role", "The owner coaches Sam.", "The owner's coach is Sam."),
    ("construction", "The owner goes by Sam.", "The owner went by Sam."),
    ("construction", "The owner goes by Sam.", "The owner goes by Sam's house."),
    ("construction", "The owner's home is in Porto.", "The owner lived in Porto."),
    ("construction", "The owner's age is 40.", "The owner's age was 40."),
    ("construction", "The owner is employed as a nurse.", "The owner was employed as a nurse."),
    ("construction", "The owner is employed as a nurse.", "The owner employs a nurse."),
    ("construction", "The owner is employed as a nurse.", "The owner is employed by a nurse."),
    ("construction", "The owner's age is 40.", "The owner's house is 40 years old."),
    ("construction", "The owner is aged 40.", "The owner is 40 minutes away."),
    ("construction", "The owner's holiday home is in Porto.", "The owner lives in Porto."),
    ("construction", "The owner's home is in Porto.", "The owner works in Porto."),
    ("variant", "The owner is a big fan of jazz.", "The owner likes jazz."),
    ("variant", "The owner is a fan of jazz.", "The owner was a fan of jazz."),
    ("variant", "The owner would rather take the train.", "The owner would rather take the bus."),
    ("variant", "The owner is unable to swim.", "The owner is able to swim."),
    ("variant", "The owner's mother died in 2015.", "The owner's mother dies in 2015."),
    ("variant", "The owner fed the cat.", "The owner feeds the cat."),
    ("variant", "The owner tied the boat to the pier.", "The owner ties the boat to the pier."),
    ("variant", "The owner sued the landlord.", "The owner sues the landlord."),
    ("variant", "The owner is unable to swim.", "The owner couldn't swim."),
    ("variant", "The owner intends to retire at 60.", "The owner wants to retire at 60."),
    ("variant", "The owner intends to retire at 60.", "The owner will retire at 60."),
    ("variant", "The owner would rather take the train.", "The owner preferred to take the train."),
    ("variant", "The owner's son is studying medicine.", "The owner's son studied medicine."),
    ("construction", "The owner is employed by Meridian.", "The owner was employed by Meridian."),
    ("construction", "The owner is employed by Meridian.", "Meridian is employed by the owner."),
    ("construction", "The owner is employed by Meridian.", "The owner's wife is employed by Meridian."),
    ("construction", "The owner is employed by Meridian.", "The owner works with Meridian."),
    ("role", "Sam's sister is the owner's friend.", "The owner's sister is Sam's friend."),
    ("role", "The owner works with Sam.", "The owner works for Sam."),
    ("role", "The owner plays tennis with Ana.", "The owner plays tennis against Ana."),
    ("role", "Sam's mum is the owner's boss.", "The owner's mum is Sam's boss."),
]


def cases() -> list[dict]:
    """One case per pair: two views of one subject, no labelled duplicate set."""
    return [{"id": f"lookalike-{index}", "kind": kind, "views": [_view(a, 1, "lookalike"), _view(b, 2, "lookalike")]}
            for index, (kind, a, b) in enumerate(PAIRS)]


def score() -> dict:
    """Merged pairs per case through the real rules provider (every one is a false merge)."""
    per_case, false_pairs = [], 0
    for case in cases():
        proposals = [p for p in rules.propose(case["views"]) if p.kind == "merge_equivalent"]
        components = _components([[str(ref.memory_id) for ref in p.inputs] for p in proposals])
        pairs = sum(len(c) * (len(c) - 1) // 2 for c in components)
        false_pairs += pairs
        per_case.append({"id": case["id"], "kind": case["kind"], "false_merge_pairs": pairs,
                         "reasons": sorted({p.reason for p in proposals})})
    return {"bank": VERSION, "bank_sha256": hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
            "pairs": len(PAIRS), "false_merge_pairs": false_pairs,
            "by_kind": {kind: sum(1 for k, _, _ in PAIRS if k == kind) for kind in KINDS},
            "cases": per_case}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    code = code_identity()
    report = {**score(), "code": code}
    text = json.dumps(report, indent=2, sort_keys=True)
    if args.output:
        with open(args.output, "x", encoding="utf-8") as handle:  # never replace a report
            handle.write(text + "\n")
    print(json.dumps({k: report[k] for k in ("pairs", "false_merge_pairs")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
