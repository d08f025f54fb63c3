"""Natural phrasings of the assistant domain, several sentences, dialogues, contexts.

textgen.py's 45 templates stay as they are (the tokenizer is built from them, and the
bundled model's vocabulary with it); this module adds what a user actually says:

* intents, each with many sentence frames: commands, polite requests, questions, statements,
  with optional fillers ("Um,", "Okay so") and politeness ("please", "thanks");
* proper capitalization: names, cities, days, months and "I" upper-case;
* an independent held-out *frame* set: a frame is test-only iff sha1(frame)[0] < 40 (about
  16 %, at least one training frame kept per intent), so a test clip in a held-out frame
  measures generalization to phrasings never trained on; sentences are further split by
  the same hash rule as textgen (sha1(sentence)[0] < 10: test);
* multi-sentence passages (2-6 utterances) and dialogues (2-3 speakers) assembled from
  these sentences (the audio side is synth.py's);
* the VibeASR JSON answer of a dialogue (`segments_json`) and context lines (`context_line`).
"""
import hashlib
import json
import random

import textgen as T

NAMES = ["Anna", "David", "Maria", "James", "Sarah", "Peter", "Lucy", "Tom", "Emma",
         "Michael", "Linda", "Robert", "Kevin", "Julia", "Olivia", "Daniel", "Sophie", "Mark",
         "Grace", "Ben", "Nora", "Alex", "Chris", "Laura", "Helen", "Joe", "Rachel", "Sam"]
# Names that only ever occur with a context line naming them (the context is what tells
# the model how to write them).
RARE_NAMES = ["Priya", "Mateo", "Ingrid", "Kofi", "Yuki", "Tariq", "Elodie", "Bjorn",
              "Ravi", "Siobhan", "Lars", "Amara"]
RELATIVES = ["Mom", "Dad", "my sister", "my brother", "Grandma", "Grandpa", "my boss",
             "the doctor", "the dentist", "my neighbor", "Aunt Helen", "Uncle Joe"]
CITIES = ["Boston", "London", "Paris", "Chicago", "Berlin", "Tokyo", "Denver", "Dallas",
          "Seattle", "Madrid", "Rome", "Toronto", "Sydney", "Miami", "Dublin", "Vienna",
          "Oslo", "Cairo", "New York", "San Francisco", "Los Angeles", "Mexico City"]
DAYS = [d.capitalize() for d in T.DAYS]
MONTHS = [m.capitalize() for m in T.MONTHS]
FILLERS = ["Um, ", "Uh, ", "Okay so ", "So ", "Well, ", "Hey, ", "Okay, ", "Hmm, "]
TOPICS = ["dinner plans", "the weekend", "a trip", "the shopping list", "the meeting",
          "the weather", "the party", "music", "the kids' school", "a doctor's appointment"]


def person(r):
    return r.choice(NAMES) if r.random() < 0.6 else r.choice(RELATIVES)


def day(r):
    c = r.random()
    if c < 0.45:
        return r.choice(DAYS)
    if c < 0.75:
        return r.choice(["today", "tomorrow", "tonight", "next week", "this weekend",
                         "tomorrow morning", "this afternoon"])
    return r.choice(MONTHS) + " " + r.choice(T.ORD)


def on_day(r):
    d = day(r)
    return ("on " + d) if d[0].isupper() else d


SLOTS = {
    "N": lambda r: T.r_count(r, 1, 59),
    "H": lambda r: T.r_count(r, 1, 12),
    "TIME": T.r_time,
    "DAY": day,
    "ONDAY": on_day,
    "WEEKDAY": lambda r: r.choice(DAYS),
    "WHO": person,
    "NAME": lambda r: r.choice(NAMES),
    "CITY": lambda r: r.choice(CITIES),
    "CITY2": lambda r: r.choice(CITIES),
    "ITEM": lambda r: r.choice(T.ITEMS),
    "ITEM2": lambda r: r.choice(T.ITEMS),
    "ROOM": lambda r: r.choice(T.ROOMS),
    "DEVICE": lambda r: r.choice(T.DEVICES),
    "GENRE": lambda r: r.choice(T.GENRES),
    "EVENT": lambda r: r.choice(T.EVENTS),
    "WEATHER": lambda r: r.choice(T.WEATHER),
    "FOOD": lambda r: r.choice(T.FOODS),
    "THING": lambda r: r.choice(T.THINGS),
    "PLACE": lambda r: r.choice(T.PLACES),
    "DEG": lambda r: T.r_count(r, 15, 30),
    "TEMP": lambda r: T.r_count(r, 1, 40),
    "K": lambda r: T.r_count(r, 2, 12),
    "PRICE": T.r_price,
    "A": lambda r: T.r_count(r, 2, 99),
    "B": lambda r: T.r_count(r, 2, 20),
    "ONOFF": lambda r: r.choice(["on", "off"]),
    "UPDOWN": lambda r: r.choice(["up", "down"]),
    "MEAL": lambda r: r.choice(["lunch", "dinner", "breakfast"]),
    "FEEL": lambda r: r.choice(T.FEEL),
}

# intent -> frames. A frame ending in "?" is a question, otherwise a statement/command ("."),
# "!" kept as is. Slots are {NAME}s of SLOTS.
INTENTS = {
    "timer": [
        "Set a timer for {N} minutes.", "Can you set a timer for {N} minutes?",
        "Please start a {N} minute timer.", "I need a timer for {N} minutes.",
        "Could you time {N} minutes for me?", "Start a timer for {H} hours.",
        "How much time is left on my timer?", "Timer for {N} minutes, please.",
        "Cancel the timer.", "Would you set a timer for {N} minutes, please?",
        "Let me know when {N} minutes are up.", "Stop the timer, please.",
    ],
    "alarm": [
        "Wake me up at {TIME}.", "Set an alarm for {TIME} {ONDAY}.",
        "Can you wake me up at {TIME} tomorrow?", "I need to get up at {TIME}.",
        "Please set my alarm for {TIME}.", "Is my alarm set for {TIME}?",
        "Turn off my alarm for {WEEKDAY}.", "Could you change my alarm to {TIME}?",
        "What time is my alarm set for?", "Snooze the alarm for {N} minutes.",
    ],
    "remind": [
        "Remind me to call {WHO} at {TIME}.", "Please remind me to buy {ITEM} {DAY}.",
        "Can you remind me about the {EVENT} {DAY}?", "Don't let me forget to call {WHO}.",
        "I have to remember to pick up {ITEM} after work.",
        "Could you remind me to take my {THING} {DAY}?",
        "Remind me in {N} minutes to check the {DEVICE}.",
        "Make a note to call {WHO} {DAY}.",
        "Set a reminder to email {NAME} {DAY}.",
        "Did I ask you to remind me about {ITEM}?",
    ],
    "weather": [
        "What is the weather like in {CITY} {DAY}?", "Will it be {WEATHER} in {CITY} {DAY}?",
        "Is it going to rain {DAY}?", "How warm is it in {CITY} right now?",
        "Do I need an umbrella {DAY}?", "What's the temperature outside?",
        "Tell me the forecast for {CITY}.", "Is it {WEATHER} in {CITY} today?",
        "It is {TEMP} degrees and {WEATHER} in {CITY}.", "How cold will it get tonight?",
        "Should I take a jacket {DAY}?", "Give me the weather for {CITY}, please.",
    ],
    "call": [
        "Call {WHO}.", "Please call {WHO}.", "Can you call {WHO} for me?",
        "I want to talk to {WHO}.", "Could you get {NAME} on the phone?",
        "Give {WHO} a call.", "Did {NAME} call me back?", "Call {NAME} on speaker.",
        "I missed a call from {WHO}.", "Who called me {DAY}?",
    ],
    "message": [
        "Send a message to {WHO} saying I will be late.",
        "Text {NAME} that I am on my way.", "Tell {WHO} I will be home soon.",
        "Can you send {NAME} a message?", "Write to {WHO} that I am running late.",
        "Let {NAME} know I will be there at {TIME}.", "Did {NAME} reply to my message?",
        "Read my new messages, please.", "Send {WHO} a text saying thanks.",
        "Ask {NAME} if dinner is still on.", "Tell {NAME} I will be there in {N} minutes.",
    ],
    "shopping": [
        "Add {ITEM} to my shopping list.", "Put {ITEM} and {ITEM2} on the list.",
        "We need {ITEM}.", "Do we have any {ITEM} left?", "Can you add {ITEM} to the list?",
        "I am out of {ITEM}.", "Remove {ITEM} from the shopping list.",
        "What is on my shopping list?", "Please add {K} {ITEM} to the list.",
        "Don't forget the {ITEM}.", "Did I already put {ITEM} on the list?",
        "Add {K} {ITEM} to my shopping list.",
    ],
    "calendar": [
        "What time is my {EVENT} {DAY}?", "Move my {EVENT} to {DAY} at {TIME}.",
        "When is my next {EVENT}?", "Cancel the {EVENT} with {WHO}.",
        "Do I have anything {DAY}?", "Add a {EVENT} with {NAME} {ONDAY}.",
        "Am I free {DAY} afternoon?", "The {EVENT} starts at {TIME} {ONDAY}.",
        "Schedule a {EVENT} with {NAME} at {TIME}.", "What does my day look like {DAY}?",
        "Push the {EVENT} back by {N} minutes.", "Is the {EVENT} still on for {WEEKDAY}?",
    ],
    "music": [
        "Play {GENRE} in the {ROOM}.", "Put on some {GENRE}.", "Can you play {GENRE}?",
        "I want to listen to {GENRE}.", "Turn the volume {UPDOWN} to {H}.",
        "Skip this song.", "Pause the music.", "What song is this?",
        "Play something relaxing, please.", "Turn it {UPDOWN} a little.",
        "Could you play {GENRE} in the {ROOM}?", "Stop the music in the {ROOM}.",
    ],
    "home": [
        "Turn {ONOFF} the {DEVICE} in the {ROOM}.", "Could you please turn {ONOFF} the lights in the {ROOM}?",
        "Switch {ONOFF} the {DEVICE}.", "Is the {DEVICE} still on?",
        "Set the temperature to {DEG} degrees.", "Make it a bit warmer in here.",
        "What is the temperature in the {ROOM}?", "Please open the {ROOM} window.",
        "Did I leave the {DEVICE} on?", "Dim the lights in the {ROOM}.",
        "Can you turn the heating up to {DEG} degrees?", "Lock the front door.",
        "Turn everything off in the {ROOM}, please.",
    ],
    "travel": [
        "How long does it take to get to {PLACE}?",
        "How long does it take to drive to {CITY} from {CITY2}?",
        "Navigate to {PLACE}.", "Take me to {PLACE}, please.", "How far is {CITY} from {CITY2}?",
        "When does the train to {CITY} leave?", "The flight to {CITY} leaves at {TIME}.",
        "Is there traffic on the way to {PLACE}?", "Find the fastest way to {PLACE}.",
        "Book a flight to {CITY} for {WEEKDAY}.", "What time do I land in {CITY}?",
        "I am going to {CITY} {DAY}.",
    ],
    "food": [
        "Book a table for {K} at {TIME}.", "I would like {FOOD} for {MEAL}.",
        "Order {FOOD} for {MEAL}, please.", "What should I make for {MEAL}?",
        "Find a restaurant near {PLACE}.", "Can we get {FOOD} tonight?",
        "I am hungry, let's have {FOOD}.", "Is the restaurant open {DAY}?",
        "Reserve a table for {K} people {ONDAY}.",
    ],
    "numbers": [
        "How much is {A} times {B}?", "What is {A} plus {B}?", "What's {A} minus {B}?",
        "This costs {PRICE}.", "I paid {PRICE} for the {ITEM}.", "How much did I spend {DAY}?",
        "Convert {A} dollars to euros.", "Divide {A} by {B}.",
    ],
    "personal": [
        "Where are my {THING}?", "I left my {THING} in the {ROOM}.", "Have you seen my {THING}?",
        "I can't find my {THING}.", "I am {FEEL} and I want to go home.",
        "I think I left my {THING} at {PLACE}.", "My {THING} is in the {ROOM}.",
        "I am so {FEEL} today.", "Meet me at {PLACE} at {TIME}.",
        "I will see you at {PLACE}.", "Are you coming to {PLACE} {DAY}?",
    ],
    "chat": [
        "Thank you very much.", "Thanks, that's all.", "Good morning, {NAME}.",
        "Good night.", "How are you today?", "Hi {NAME}, how was your day?",
        "That sounds great.", "Yes, please.", "No, thank you.", "Okay, sounds good.",
        "I don't know yet.", "Sure, no problem.", "What do you think?",
        "Let me check and get back to you.", "See you {DAY}, {NAME}.",
        "Sorry, I didn't catch that.", "That works for me.",
    ],
}


def _h(s):
    return hashlib.sha1(s.encode()).digest()[0]


def frame_is_heldout(frame):
    return _h("frame:" + frame) < 40


def frames(heldout):
    """[(intent, frame)] of the training frames (heldout False) or the held-out ones. Every
    intent keeps at least its first frame for training."""
    out = []
    for intent, fs in INTENTS.items():
        for k, f in enumerate(fs):
            h = frame_is_heldout(f) and k > 0
            if h == heldout:
                out.append((intent, f))
    return out


def fill(frame, r):
    s = frame
    while "{" in s:
        a = s.index("{")
        b = s.index("}", a)
        s = s[:a] + SLOTS[s[a + 1:b]](r) + s[b + 1:]
    return s


def decorate(s, r):
    """Optional filler at the start, optional "please"/"thanks" where the frame allows."""
    if r.random() < 0.18:
        f = r.choice(FILLERS)
        s = f + s[0].lower() + s[1:] if not s.startswith("I ") else f + s
    elif r.random() < 0.08 and s.endswith(".") and not s.endswith("please."):
        s = s[:-1] + r.choice([", please.", ", thanks."])
    return s


def sentence_is_test(s):
    return T.is_test(s)


def natural(n, seed, heldout_frames=False, test=False):
    """n distinct natural sentences: frames of the chosen set; sentences of the chosen
    hash split (only checked for training frames: a held-out frame is test-only anyway)."""
    r = random.Random(seed)
    fs = frames(heldout_frames)
    out, seen = [], set()
    tries = 0
    while len(out) < n and tries < n * 50:
        tries += 1
        _, f = fs[r.randrange(len(fs))]
        s = decorate(fill(f, r), r)
        s = s[0].upper() + s[1:]
        if s in seen or len(s) > 120:
            continue
        if not heldout_frames and sentence_is_test(s) != test:
            continue
        seen.add(s)
        out.append(s)
    return out


def old_grammar(n, seed, test=False):
    """textgen's sentences with names, places, days and "I" capitalized."""
    return [capitalize(s) for s in T.generate(n, seed=seed, want_test=test)]


_CAPS = {w.lower(): w for w in NAMES + CITIES + DAYS + MONTHS + RARE_NAMES +
         ["Mom", "Dad", "Grandma", "Grandpa", "Helen", "Joe", "Aunt", "Uncle"]}
_CAPS["i"] = "I"


def capitalize(s):
    # multi-word cities first
    for c in CITIES:
        if " " in c:
            s = s.replace(c.lower(), c)
    ws = s.split(" ")
    out = []
    for k, w in enumerate(ws):
        core = w.rstrip(".?,!")
        tail = w[len(core):]
        if core.lower() in _CAPS and not (core.lower() in ("may",) and k > 0 and False):
            core = _CAPS[core.lower()]
        if core.lower() == "i'll" or core.lower() == "i'm":
            core = "I" + core[1:]
        out.append(core + tail)
    s = " ".join(out)
    return s[0].upper() + s[1:]


def with_rare_name(s, r):
    """A sentence with one of its names replaced by a rare name (only for context clips)."""
    for nm in NAMES:
        if (" " + nm) in s or s.startswith(nm):
            return s.replace(nm, r.choice(RARE_NAMES), 1)
    return s


def names_in(s):
    return [w.strip(".,?!") for w in s.split() if w.strip(".,?!") in NAMES + RARE_NAMES]


def context_line(texts, r):
    """A context line as a user gives one: the names (and distractors) and/or a topic."""
    names = []
    for t in texts:
        for nm in names_in(t):
            if nm not in names:
                names.append(nm)
    pool = [n for n in NAMES + RARE_NAMES if n not in names]
    extra = r.sample(pool, r.randint(0, 2))
    allnames = names + extra
    r.shuffle(allnames)
    parts = []
    if allnames:
        parts.append(r.choice(["Names: ", "Speakers and people mentioned: ", "People: "]) +
                     ", ".join(allnames) + ".")
    if r.random() < 0.5 or not parts:
        parts.append("Topic: " + r.choice(TOPICS) + ".")
    return " ".join(parts)


def fmt_time(t):
    return float("%.2f" % t)


def segments_json(segs):
    """VibeASR's JSON answer: [{"Start":s,"End":e,"Speaker":k,"Content":"..."}...], compact,
    times in seconds with at most two decimals (what src/engine/segments.cc parses)."""
    rows = [{"Start": fmt_time(s), "End": fmt_time(e), "Speaker": int(k), "Content": c}
            for s, e, k, c in segs]
    return json.dumps(rows, separators=(",", ":"))


def vocabulary():
    r = random.Random(0)
    words = set()
    fs = frames(False) + frames(True)
    for _ in range(100000):
        words.update(w.strip(".,?!").lower() for w in fill(fs[r.randrange(len(fs))][1], r).split())
    return sorted(words)


if __name__ == "__main__":
    tr, ho = frames(False), frames(True)
    print(len(tr), "training frames,", len(ho), "held-out frames;",
          len(vocabulary()), "words (natural frames)")
    for s in natural(8, 1) + natural(4, 2, heldout_frames=True) + old_grammar(4, 3):
        print(s)
    print(segments_json([(0.31, 2.5, 0, "Hi Anna, how was your day?"), (3.1, 4.2, 1, "Good.")]))
