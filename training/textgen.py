"""Deterministic generator of the training/test text (our own text, written here).

Domain: short spoken requests to a personal assistant and everyday statements
(timers, alarms, weather, calls and messages, shopping lists, calendar, music, home
control, travel, small talk), with numbers, times, days and prices spelled out in
words exactly as they are spoken. All text is ASCII English; the transcript is the
sentence with its first letter capitalised and a final '.' or '?'.

split(sentence) decides train vs test by a hash of the sentence, so a held-out
sentence can never be generated into the training set.
"""
import hashlib
import random

ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen " \
       "fourteen fifteen sixteen seventeen eighteen nineteen".split()
TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def num_words(n):
    if n < 20:
        return ONES[n]
    if n < 100:
        t, o = divmod(n, 10)
        return TENS[t - 2] + ("" if o == 0 else " " + ONES[o])
    if n < 1000:
        h, r = divmod(n, 100)
        return ONES[h] + " hundred" + ("" if r == 0 else " and " + num_words(r))
    th, r = divmod(n, 1000)
    return num_words(th) + " thousand" + ("" if r == 0 else " " + num_words(r))


DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
MONTHS = ("january february march april may june july august september october "
          "november december").split()
ORD = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
       "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth").split()
PEOPLE = ["mom", "dad", "my sister", "my brother", "grandma", "grandpa", "anna", "david",
          "maria", "james", "sarah", "peter", "lucy", "tom", "emma", "michael",
          "the doctor", "my boss", "the office", "the school", "aunt helen", "uncle joe",
          "my neighbor", "the dentist", "linda", "robert", "kevin", "julia", "the bank",
          "the restaurant"]
CITIES = ["boston", "london", "paris", "chicago", "berlin", "tokyo", "denver", "dallas",
          "seattle", "madrid", "rome", "toronto", "sydney", "miami", "dublin", "vienna",
          "oslo", "cairo", "new york", "san francisco", "los angeles", "mexico city"]
ITEMS = ["apples", "bananas", "eggs", "milk", "bread", "butter", "cheese", "tomatoes",
         "potatoes", "onions", "carrots", "rice", "pasta", "coffee", "tea", "sugar",
         "oranges", "lemons", "chicken", "fish", "yogurt", "cookies", "juice", "soap",
         "batteries", "paper towels", "napkins", "grapes", "peppers", "beans"]
ROOMS = ["kitchen", "living room", "bedroom", "bathroom", "garage", "office", "hallway",
         "basement", "garden", "dining room"]
DEVICES = ["lights", "heater", "fan", "radio", "television", "air conditioner", "lamp",
           "coffee machine", "washing machine", "oven"]
GENRES = ["jazz", "rock", "classical music", "pop music", "the news", "some blues",
          "country music", "relaxing music", "my playlist", "the radio"]
EVENTS = ["meeting", "lunch", "dinner", "appointment", "party", "interview", "class",
          "flight", "train", "game", "concert", "call"]
WEATHER = ["sunny", "cloudy", "rainy", "windy", "cold", "warm", "hot", "foggy", "snowy"]
FEEL = ["tired", "hungry", "happy", "busy", "late", "ready", "cold", "bored", "sorry"]
FOODS = ["pizza", "soup", "salad", "pancakes", "noodles", "a sandwich", "tacos", "curry",
         "fried rice", "ice cream"]
COLORS = ["red", "blue", "green", "yellow", "white", "black", "orange", "purple"]
THINGS = ["keys", "phone", "wallet", "glasses", "umbrella", "bag", "jacket", "ticket",
          "book", "charger"]
PLACES = ["the station", "the airport", "the park", "the library", "the hospital",
          "the museum", "the beach", "the market", "work", "home", "the gym", "school",
          "the mall", "the city center"]


def r_time(rng):
    h = rng.randint(1, 12)
    m = rng.choice([0, 0, 5, 10, 15, 20, 30, 30, 40, 45, 50])
    ampm = rng.choice(["", "", " in the morning", " in the evening", " at night", " a m", " p m"])
    if m == 0:
        base = num_words(h) + rng.choice([" o'clock", ""])
    elif m < 10:
        base = num_words(h) + " oh " + num_words(m)
    else:
        base = num_words(h) + " " + num_words(m)
    if m == 30 and rng.random() < 0.3:
        base = "half past " + num_words(h)
    if m == 15 and rng.random() < 0.3:
        base = "quarter past " + num_words(h)
    return base + ampm


def r_day(rng):
    c = rng.random()
    if c < 0.5:
        return rng.choice(DAYS)
    if c < 0.7:
        return rng.choice(["today", "tomorrow", "tonight", "next week", "this weekend"])
    return MONTHS[rng.randrange(12)] + " " + rng.choice(ORD)


def r_count(rng, lo=1, hi=99):
    return num_words(rng.randint(lo, hi))


def r_price(rng):
    d = rng.randint(1, 250)
    s = num_words(d) + (" dollar" if d == 1 else " dollars")
    if rng.random() < 0.4:
        s += " and " + num_words(rng.randint(1, 99)) + " cents"
    return s


def r_year(rng):
    y = rng.randint(1950, 2030)
    if y < 2000:
        return num_words(y // 100) + " " + num_words(y % 100)
    if y < 2010:
        return "two thousand" + ("" if y == 2000 else " and " + num_words(y % 100))
    return "twenty " + num_words(y % 100)


def r_phone(rng):
    return " ".join(ONES[rng.randint(0, 9)] for _ in range(rng.choice([3, 4, 4, 7])))


TEMPLATES = [
    (lambda r: f"set a timer for {r_count(r, 1, 59)} minutes", "."),
    (lambda r: f"set a timer for {r_count(r, 1, 12)} hours and {r_count(r, 1, 59)} minutes", "."),
    (lambda r: f"wake me up at {r_time(r)}", "."),
    (lambda r: f"set an alarm for {r_time(r)} on {r.choice(DAYS)}", "."),
    (lambda r: f"remind me to call {r.choice(PEOPLE)} at {r_time(r)}", "."),
    (lambda r: f"remind me to buy {r.choice(ITEMS)} {r_day(r)}", "."),
    (lambda r: f"what is the weather like in {r.choice(CITIES)} {r_day(r)}", "?"),
    (lambda r: f"will it be {r.choice(WEATHER)} in {r.choice(CITIES)} {r_day(r)}", "?"),
    (lambda r: f"it is {r_count(r, 1, 40)} degrees and {r.choice(WEATHER)} in {r.choice(CITIES)}", "."),
    (lambda r: f"call {r.choice(PEOPLE)}", "."),
    (lambda r: f"send a message to {r.choice(PEOPLE)} saying i will be {r.choice(['late', 'home soon', 'there at ' + r_time(r), 'there in ' + r_count(r, 2, 45) + ' minutes'])}", "."),
    (lambda r: f"add {r_count(r, 1, 12)} {r.choice(ITEMS)} to my shopping list", "."),
    (lambda r: f"add {r.choice(ITEMS)} and {r.choice(ITEMS)} to the list", "."),
    (lambda r: f"do we have any {r.choice(ITEMS)} left", "?"),
    (lambda r: f"the {r.choice(EVENTS)} starts at {r_time(r)} on {r.choice(DAYS)}", "."),
    (lambda r: f"move my {r.choice(EVENTS)} to {r_day(r)} at {r_time(r)}", "."),
    (lambda r: f"what time is my {r.choice(EVENTS)} {r_day(r)}", "?"),
    (lambda r: f"cancel the {r.choice(EVENTS)} with {r.choice(PEOPLE)}", "."),
    (lambda r: f"play {r.choice(GENRES)} in the {r.choice(ROOMS)}", "."),
    (lambda r: f"turn {r.choice(['on', 'off'])} the {r.choice(DEVICES)} in the {r.choice(ROOMS)}", "."),
    (lambda r: f"set the temperature to {r_count(r, 15, 30)} degrees", "."),
    (lambda r: f"turn the volume {r.choice(['up', 'down'])} to {r_count(r, 1, 10)}", "."),
    (lambda r: f"how long does it take to get to {r.choice(PLACES)}", "?"),
    (lambda r: f"the {r.choice(['bus', 'train', 'flight'])} to {r.choice(CITIES)} leaves at {r_time(r)}", "."),
    (lambda r: f"book a table for {r_count(r, 2, 12)} at {r_time(r)}", "."),
    (lambda r: f"i would like {r.choice(FOODS)} for {r.choice(['lunch', 'dinner', 'breakfast'])}", "."),
    (lambda r: f"this costs {r_price(r)}", "."),
    (lambda r: f"how much is {r_count(r, 2, 99)} times {r_count(r, 2, 20)}", "?"),
    (lambda r: f"what is {r_count(r, 1, 999)} plus {r_count(r, 1, 999)}", "?"),
    (lambda r: f"i paid {r_price(r)} for the {r.choice(ITEMS + THINGS)}", "."),
    (lambda r: f"i was born in {r_year(r)}", "."),
    (lambda r: f"my number is {r_phone(r)}", "."),
    (lambda r: f"there are {r_count(r, 2, 999)} people in the {r.choice(ROOMS + PLACES[:6])}", "."),
    (lambda r: f"i am {r.choice(FEEL)} and i want to go {r.choice(['home', 'to bed', 'to the park', 'outside'])}", "."),
    (lambda r: f"where are my {r.choice(THINGS)}", "?"),
    (lambda r: f"i left my {r.choice(THINGS)} in the {r.choice(ROOMS)}", "."),
    (lambda r: f"please open the {r.choice(['door', 'window', 'garage', 'curtains'])}", "."),
    (lambda r: f"the {r.choice(COLORS)} car is parked near {r.choice(PLACES)}", "."),
    (lambda r: f"meet me at {r.choice(PLACES)} at {r_time(r)}", "."),
    (lambda r: f"how far is {r.choice(CITIES)} from {r.choice(CITIES)}", "?"),
    (lambda r: f"today is {r.choice(DAYS)} the {r.choice(ORD)} of {r.choice(MONTHS)}", "."),
    (lambda r: f"my {r.choice(['sister', 'brother', 'son', 'daughter', 'friend'])} is {r_count(r, 2, 90)} years old", "."),
    (lambda r: f"navigate to {r.choice(PLACES)}", "."),
    (lambda r: f"thank you very much", "."),
    (lambda r: f"good {r.choice(['morning', 'evening', 'night', 'afternoon'])} {r.choice(PEOPLE[:16])}", "."),
]


def transcript(body, punct):
    return body[0].upper() + body[1:] + punct


def is_test(sentence):
    """Stable hash split: about 4% of distinct sentences are reserved for test."""
    h = hashlib.sha1(sentence.lower().rstrip(".?").encode()).digest()
    return h[0] < 10


def generate(n, seed, want_test):
    """n distinct transcripts from the split (train or test), deterministic in seed."""
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        f, p = TEMPLATES[rng.randrange(len(TEMPLATES))]
        s = transcript(f(rng), p)
        if s in seen or is_test(s) != want_test or len(s) > 110:
            continue
        seen.add(s)
        out.append(s)
    return out


def vocabulary():
    """Words the grammar can produce (for the README's vocabulary-size claim)."""
    rng = random.Random(0)
    words = set()
    for _ in range(200000):
        f, _ = TEMPLATES[rng.randrange(len(TEMPLATES))]
        words.update(f(rng).split())
    return sorted(words)


if __name__ == "__main__":
    v = vocabulary()
    print(len(v), "words")
    for s in generate(10, 1, False) + generate(5, 1, True):
        print(s)
