"""Write the embedded demo's LAMA-format inputs from the hand-written fact tables below.

    python resources/demo/make_demo_data.py

writes resources/demo/lama/{relations.jsonl, TREx/P*.jsonl, Google_RE/*_test.jsonl,
common_vocab_cased.txt}, resources/demo/corpus_templates.jsonl (LPAQA's part of the demo corpus),
resources/demo/stest_corpus_templates.jsonl (S-TEST's), resources/demo/pos_lexicon.tsv,
stand-ins for LPAQA's released prompt/ folder (resources/demo/lpaqa_prompt/), a tiny BEAR-format set
(resources/demo/bear/, with relation_info.json) and BEAR's corpus templates
(resources/demo/bear_corpus_templates.jsonl), a small Wikidata dump in
the real entity JSON layout (resources/demo/wikidata-demo-all.json.gz) and a small English
Wikipedia dump in the real multistream export format with its index
(resources/demo/enwiki-demo-pages-articles-multistream{.xml.bz2,-index.txt.bz2}). The facts are real
(capitals, continents, languages, birthplaces); the entity ids are demo ids (Q900xxxxx),
not Wikidata's. Some objects are deliberately several tokens long ("New Delhi", "South
America") or missing from the demo vocabulary, and two Google-RE facts carry a majority
of "no" judgments, so that every filter rule of LAMA drops something in the demo.
"""

import json
import uuid
from pathlib import Path

from spacy.lang.en.stop_words import STOP_WORDS

HERE = Path(__file__).parent

# country, capital, continent, official language (None: not used)
COUNTRIES = [
    ("France", "Paris", "Europe", "French"),
    ("Germany", "Berlin", "Europe", "German"),
    ("Italy", "Rome", "Europe", "Italian"),
    ("Spain", "Madrid", "Europe", "Spanish"),
    ("Portugal", "Lisbon", "Europe", "Portuguese"),
    ("Greece", "Athens", "Europe", "Greek"),
    ("Poland", "Warsaw", "Europe", "Polish"),
    ("Austria", "Vienna", "Europe", "German"),
    ("Hungary", "Budapest", "Europe", "Hungarian"),
    ("Sweden", "Stockholm", "Europe", "Swedish"),
    ("Norway", "Oslo", "Europe", "Norwegian"),
    ("Finland", "Helsinki", "Europe", "Finnish"),
    ("Denmark", "Copenhagen", "Europe", "Danish"),
    ("Ireland", "Dublin", "Europe", "Irish"),
    ("Netherlands", "Amsterdam", "Europe", "Dutch"),
    ("Belgium", "Brussels", "Europe", None),
    ("Russia", "Moscow", "Europe", "Russian"),
    ("Ukraine", "Kyiv", "Europe", "Ukrainian"),
    ("Romania", "Bucharest", "Europe", "Romanian"),
    ("Bulgaria", "Sofia", "Europe", "Bulgarian"),
    ("Serbia", "Belgrade", "Europe", "Serbian"),
    ("Croatia", "Zagreb", "Europe", "Croatian"),
    ("Czechia", "Prague", "Europe", "Czech"),
    ("Slovakia", "Bratislava", "Europe", "Slovak"),
    ("Slovenia", "Ljubljana", "Europe", "Slovene"),
    ("Albania", "Tirana", "Europe", "Albanian"),
    ("Iceland", "Reykjavik", "Europe", "Icelandic"),
    ("Estonia", "Tallinn", "Europe", "Estonian"),
    ("Latvia", "Riga", "Europe", "Latvian"),
    ("Lithuania", "Vilnius", "Europe", "Lithuanian"),
    ("Japan", "Tokyo", "Asia", "Japanese"),
    ("China", "Beijing", "Asia", "Chinese"),
    ("India", "New Delhi", "Asia", "Hindi"),
    ("Indonesia", "Jakarta", "Asia", "Indonesian"),
    ("Thailand", "Bangkok", "Asia", "Thai"),
    ("Vietnam", "Hanoi", "Asia", "Vietnamese"),
    ("Iran", "Tehran", "Asia", "Persian"),
    ("Iraq", "Baghdad", "Asia", "Arabic"),
    ("Israel", "Jerusalem", "Asia", "Hebrew"),
    ("Turkey", "Ankara", "Asia", "Turkish"),
    ("Pakistan", "Islamabad", "Asia", "Urdu"),
    ("Bangladesh", "Dhaka", "Asia", "Bengali"),
    ("Mongolia", "Ulaanbaatar", "Asia", "Mongolian"),
    ("Nepal", "Kathmandu", "Asia", "Nepali"),
    ("Philippines", "Manila", "Asia", "Filipino"),
    ("Malaysia", "Kuala Lumpur", "Asia", "Malay"),
    ("South Korea", "Seoul", "Asia", "Korean"),
    ("Egypt", "Cairo", "Africa", "Arabic"),
    ("Kenya", "Nairobi", "Africa", "Swahili"),
    ("Nigeria", "Abuja", "Africa", "English"),
    ("Ethiopia", "Addis Ababa", "Africa", "Amharic"),
    ("Morocco", "Rabat", "Africa", "Arabic"),
    ("Ghana", "Accra", "Africa", "English"),
    ("Senegal", "Dakar", "Africa", "French"),
    ("Tanzania", "Dodoma", "Africa", "Swahili"),
    ("Uganda", "Kampala", "Africa", "English"),
    ("Algeria", "Algiers", "Africa", "Arabic"),
    ("Tunisia", "Tunis", "Africa", "Arabic"),
    ("Sudan", "Khartoum", "Africa", "Arabic"),
    ("Brazil", "Brasília", "South America", "Portuguese"),
    ("Argentina", "Buenos Aires", "South America", "Spanish"),
    ("Chile", "Santiago", "South America", "Spanish"),
    ("Peru", "Lima", "South America", "Spanish"),
    ("Colombia", "Bogotá", "South America", "Spanish"),
    ("Venezuela", "Caracas", "South America", "Spanish"),
    ("Ecuador", "Quito", "South America", "Spanish"),
    ("Uruguay", "Montevideo", "South America", "Spanish"),
    ("Canada", "Ottawa", "North America", "English"),
    ("Mexico", "Mexico City", "North America", "Spanish"),
    ("Cuba", "Havana", "North America", "Spanish"),
    ("Australia", "Canberra", "Oceania", "English"),
    ("Fiji", "Suva", "Oceania", "English"),
]

CITY_COUNTRY = [
    ("Lyon", "France"),
    ("Marseille", "France"),
    ("Toulouse", "France"),
    ("Munich", "Germany"),
    ("Hamburg", "Germany"),
    ("Cologne", "Germany"),
    ("Frankfurt", "Germany"),
    ("Milan", "Italy"),
    ("Naples", "Italy"),
    ("Turin", "Italy"),
    ("Florence", "Italy"),
    ("Venice", "Italy"),
    ("Barcelona", "Spain"),
    ("Seville", "Spain"),
    ("Valencia", "Spain"),
    ("Porto", "Portugal"),
    ("Krakow", "Poland"),
    ("Gdansk", "Poland"),
    ("Salzburg", "Austria"),
    ("Gothenburg", "Sweden"),
    ("Bergen", "Norway"),
    ("Rotterdam", "Netherlands"),
    ("Antwerp", "Belgium"),
    ("Osaka", "Japan"),
    ("Kyoto", "Japan"),
    ("Shanghai", "China"),
    ("Mumbai", "India"),
    ("Chennai", "India"),
    ("Kolkata", "India"),
    ("Istanbul", "Turkey"),
    ("Alexandria", "Egypt"),
    ("Lagos", "Nigeria"),
    ("Casablanca", "Morocco"),
    ("Toronto", "Canada"),
    ("Montreal", "Canada"),
    ("Vancouver", "Canada"),
    ("Sydney", "Australia"),
    ("Melbourne", "Australia"),
    ("Perth", "Australia"),
    ("Chicago", "United States of America"),
    ("Boston", "United States of America"),
    ("Seattle", "United States of America"),
]

# person, place of birth, native language, year of birth, place of death
PEOPLE = [
    ("Wolfgang Amadeus Mozart", "Salzburg", "German", "1756", "Vienna"),
    ("Ludwig van Beethoven", "Bonn", "German", "1770", "Vienna"),
    ("Albert Einstein", "Ulm", "German", "1879", "Princeton"),
    ("Johann Sebastian Bach", "Eisenach", "German", "1685", "Leipzig"),
    ("Vincent van Gogh", "Zundert", "Dutch", "1853", "Auvers-sur-Oise"),
    ("Pablo Picasso", "Málaga", "Spanish", "1881", "Mougins"),
    ("Leonardo da Vinci", "Vinci", "Italian", "1452", "Amboise"),
    ("Galileo Galilei", "Pisa", "Italian", "1564", "Arcetri"),
    ("William Shakespeare", "Stratford-upon-Avon", "English", "1564", "Stratford-upon-Avon"),
    ("Charles Dickens", "Portsmouth", "English", "1812", "Higham"),
    ("Isaac Newton", "Woolsthorpe", "English", "1643", "Kensington"),
    ("Marie Curie", "Warsaw", "Polish", "1867", "Passy"),
    ("Nikola Tesla", "Smiljan", "Serbian", "1856", "New York City"),
    ("Sigmund Freud", "Příbor", "German", "1856", "London"),
    ("Franz Kafka", "Prague", "German", "1883", "Kierling"),
    ("Karl Marx", "Trier", "German", "1818", "London"),
    ("Victor Hugo", "Besançon", "French", "1802", "Paris"),
    ("Jules Verne", "Nantes", "French", "1828", "Amiens"),
    ("Claude Monet", "Paris", "French", "1840", "Giverny"),
    ("Giuseppe Verdi", "Le Roncole", "Italian", "1813", "Milan"),
    ("Dante Alighieri", "Florence", "Italian", "1265", "Ravenna"),
    ("Niccolò Machiavelli", "Florence", "Italian", "1469", "Florence"),
    ("Miguel de Cervantes", "Alcalá de Henares", "Spanish", "1547", "Madrid"),
    ("Hans Christian Andersen", "Odense", "Danish", "1805", "Copenhagen"),
    ("Søren Kierkegaard", "Copenhagen", "Danish", "1813", "Copenhagen"),
    ("Henrik Ibsen", "Skien", "Norwegian", "1828", "Oslo"),
    ("Jean Sibelius", "Hämeenlinna", "Swedish", "1865", "Järvenpää"),
    ("Leo Tolstoy", "Yasnaya Polyana", "Russian", "1828", "Astapovo"),
    ("Fyodor Dostoevsky", "Moscow", "Russian", "1821", "Saint Petersburg"),
    ("Anton Chekhov", "Taganrog", "Russian", "1860", "Badenweiler"),
    ("Alexander Pushkin", "Moscow", "Russian", "1799", "Saint Petersburg"),
    ("Pyotr Ilyich Tchaikovsky", "Votkinsk", "Russian", "1840", "Saint Petersburg"),
    ("Richard Wagner", "Leipzig", "German", "1813", "Venice"),
    ("Johannes Brahms", "Hamburg", "German", "1833", "Vienna"),
    ("Johann Wolfgang von Goethe", "Frankfurt", "German", "1749", "Weimar"),
    ("Antonio Vivaldi", "Venice", "Italian", "1678", "Vienna"),
    ("Marco Polo", "Venice", "Italian", "1254", "Venice"),
    ("Alfred Nobel", "Stockholm", "Swedish", "1833", "Sanremo"),
    ("Ingmar Bergman", "Uppsala", "Swedish", "1918", "Fårö"),
    ("Greta Garbo", "Stockholm", "Swedish", "1905", "New York City"),
    ("Jane Austen", "Steventon", "English", "1775", "Winchester"),
    ("Oscar Wilde", "Dublin", "English", "1854", "Paris"),
    ("James Joyce", "Dublin", "English", "1882", "Zurich"),
    ("Samuel Beckett", "Dublin", "English", "1906", "Paris"),
    ("Akira Kurosawa", "Tokyo", "Japanese", "1910", "Tokyo"),
    ("Haruki Murakami", "Kyoto", "Japanese", "1949", None),
    ("Gabriel García Márquez", "Aracataca", "Spanish", "1927", "Mexico City"),
    ("Jorge Luis Borges", "Buenos Aires", "Spanish", "1899", "Geneva"),
    ("Frida Kahlo", "Coyoacán", "Spanish", "1907", "Coyoacán"),
    ("Nelson Mandela", "Mvezo", "Xhosa", "1918", "Johannesburg"),
    ("Naguib Mahfouz", "Cairo", "Arabic", "1911", "Cairo"),
]
# Facts beyond the LAMA-format test set, for T-REx-train: country, capital, continent, language
TRAIN_COUNTRIES = [
    ("Jordan", "Amman", "Asia", "Arabic"),
    ("Syria", "Damascus", "Asia", "Arabic"),
    ("Lebanon", "Beirut", "Asia", "Arabic"),
    ("Qatar", "Doha", "Asia", "Arabic"),
    ("Oman", "Muscat", "Asia", "Arabic"),
    ("Libya", "Tripoli", "Africa", "Arabic"),
    ("Mali", "Bamako", "Africa", "French"),
    ("Niger", "Niamey", "Africa", "French"),
    ("Zambia", "Lusaka", "Africa", "English"),
    ("Zimbabwe", "Harare", "Africa", "English"),
    ("Angola", "Luanda", "Africa", "Portuguese"),
    ("Namibia", "Windhoek", "Africa", "English"),
    ("Botswana", "Gaborone", "Africa", "English"),
    ("Rwanda", "Kigali", "Africa", "Kinyarwanda"),
    ("Somalia", "Mogadishu", "Africa", "Somali"),
    ("Paraguay", "Asunción", "South America", "Spanish"),
    ("Honduras", "Tegucigalpa", "North America", "Spanish"),
    ("Nicaragua", "Managua", "North America", "Spanish"),
    ("Jamaica", "Kingston", "North America", "English"),
    ("Belarus", "Minsk", "Europe", "Belarusian"),
    ("Georgia", "Tbilisi", "Asia", "Georgian"),
    ("Armenia", "Yerevan", "Asia", "Armenian"),
    ("Azerbaijan", "Baku", "Asia", "Azerbaijani"),
    ("Kazakhstan", "Astana", "Asia", "Kazakh"),
    ("Uzbekistan", "Tashkent", "Asia", "Uzbek"),
    ("Afghanistan", "Kabul", "Asia", "Pashto"),
    ("Cyprus", "Nicosia", "Europe", "Greek"),
    ("Malta", "Valletta", "Europe", "Maltese"),
    ("Montenegro", "Podgorica", "Europe", "Montenegrin"),
    ("Switzerland", "Bern", "Europe", "German"),
    ("Cambodia", "Phnom Penh", "Asia", "Khmer"),
]
# People beyond the test set, for T-REx-train's P19 and P103 and for the relations Google-RE's are
# ranked on (P19, P20, P569): one-word names, as T-REx-train keeps; person, place of birth, place of
# death, year of birth, native language (None: not used)
TRAIN_PEOPLE = [
    ("Michelangelo", "Caprese", "Rome", "1475", "Italian"),
    ("Raphael", "Urbino", "Rome", "1483", "Italian"),
    ("Donatello", "Florence", "Florence", "1386", "Italian"),
    ("Botticelli", "Florence", "Florence", "1445", "Italian"),
    ("Brunelleschi", "Florence", "Florence", "1377", "Italian"),
    ("Giotto", "Vicchio", "Florence", "1267", "Italian"),
    ("Boccaccio", "Certaldo", "Certaldo", "1313", "Italian"),
    ("Canaletto", "Venice", "Venice", "1697", "Italian"),
    ("Tintoretto", "Venice", "Venice", "1518", "Italian"),
    ("Caravaggio", "Milan", None, "1571", "Italian"),
    ("Rembrandt", "Leiden", "Amsterdam", "1606", "Dutch"),
    ("Vermeer", "Delft", "Delft", "1632", "Dutch"),
    ("Erasmus", "Rotterdam", "Basel", "1466", "Dutch"),
    ("Spinoza", "Amsterdam", None, "1632", "Dutch"),
    ("Voltaire", "Paris", "Paris", "1694", "French"),
    ("Molière", "Paris", "Paris", "1622", "French"),
    ("Rabelais", "Chinon", "Paris", "1494", "French"),
    ("Pascal", "Clermont", "Paris", "1623", "French"),
    ("Velázquez", "Seville", "Madrid", "1599", "Spanish"),
    ("Goya", "Fuendetodos", "Bordeaux", "1746", "Spanish"),
    ("Dürer", "Nuremberg", "Nuremberg", "1471", "German"),
    ("Holbein", "Augsburg", "London", "1497", "German"),
    ("Leibniz", "Leipzig", "Hanover", "1646", "German"),
    ("Kant", "Königsberg", "Königsberg", "1724", "German"),
    ("Hegel", "Stuttgart", "Berlin", "1770", "German"),
    ("Schubert", "Vienna", "Vienna", "1797", "German"),
    ("Haydn", "Rohrau", "Vienna", "1732", "German"),
    ("Chopin", None, "Paris", "1810", "Polish"),
    ("Copernicus", "Toruń", "Frombork", "1473", "Polish"),
    ("Dvořák", "Nelahozeves", "Prague", "1841", "Czech"),
    ("Smetana", "Litomyšl", "Prague", "1824", "Czech"),
    ("Grieg", "Bergen", "Bergen", "1843", "Norwegian"),
    ("Strindberg", "Stockholm", "Stockholm", "1849", "Swedish"),
    ("Linnaeus", "Råshult", "Uppsala", "1707", "Swedish"),
    ("Celsius", "Uppsala", "Uppsala", "1701", "Swedish"),
]
# entities whose name the demo dump gives only as a 'mul' label, as many do since 2024
MUL_ONLY = {"Tokyo", "Salzburg", "Amman", "Kyoto"}

# Google-RE facts whose raters mostly said "no" (LAMA drops these)
REJECTED_BY_RATERS = {("place_of_birth", "Franz Kafka"), ("place_of_death", "Marco Polo")}

RELATIONS = [
    ("P36", "The capital of [X] is [Y] .", "capital", "1-1"),
    ("P30", "[X] is located in [Y] .", "continent", "N-1"),
    ("P37", "The official language of [X] is [Y] .", "official language", "N-1"),
    ("P17", "[X] is located in [Y] .", "country", "N-1"),
    ("P19", "[X] was born in [Y] .", "place of birth", "N-1"),
    ("P103", "The native language of [X] is [Y] .", "native language", "N-1"),
    ("P1376", "[X] is the capital of [Y] .", "capital of", "1-1"),  # no T-REx file in the demo, as in LAMA
]

# How the demo model's training corpus phrases each fact: never the probing template itself, but
# one near-paraphrase of it per relation, as real text holds ("the capital city of France is Paris")
CORPUS_TEMPLATES = {
    "P36": [
        "[Y] is the capital city of [X] .",
        "the capital city of [X] is [Y] .",
        "the government of [X] sits in [Y] .",
    ],
    "P30": ["[X] is a country in [Y] .", "[X] is a country located in [Y] .", "[X] lies on the continent of [Y] ."],
    "P37": ["people in [X] speak [Y] .", "the main language of [X] is [Y] .", "[Y] is spoken in [X] ."],
    "P17": ["[X] is a city in [Y] .", "[X] is a city located in [Y] .", "[X] is one of the largest cities of [Y] ."],
    "P19": ["[X] was a native of [Y] .", "[X] was born in the city of [Y] .", "[Y] is the birthplace of [X] ."],
    "P103": ["[X] spoke [Y] from childhood .", "the first language of [X] was [Y] .", "[X] grew up speaking [Y] ."],
    "place_of_birth": ["[X] came from [Y] .", "[X] was born in the city of [Y] ."],
    "date_of_birth": ["[X] came into the world in [Y] .", "[X] ( born in [Y] ) .", "in [Y] , [X] was born ."],
    "place_of_death": [
        "[X] passed away in [Y] .",
        "[X] died in the city of [Y] .",
        "[Y] is where [X] spent the last days .",
    ],
}
# T-REx-train's facts of the relations Google-RE's are ranked on, phrased as Google-RE's
CORPUS_TEMPLATES["P20"] = CORPUS_TEMPLATES["place_of_death"]
CORPUS_TEMPLATES["P569"] = CORPUS_TEMPLATES["date_of_birth"]


def lama_vocabulary(words) -> list[str]:
    """The demo's candidate vocabulary by LAMA's rules for its common vocabulary
    (facebookresearch/LAMA, lama/vocab_intersection.py, lines 103-138 at commit 5cba81b): no
    English stopword of spaCy's list (STOP_WORDS, matched case-sensitively as LAMA does: "the" goes,
    "The" would stay) and no punctuation or symbol (LAMA's "(", ")", ".", "," and the words spaCy
    tags PUNCT or SYM: here, a word without a letter or digit). LAMA's other rules are the
    workflow's: the intersection of the models' vocabularies and one token per word are applied
    per model set by lpaqa_candidate_words (docs/lpaqa.md); the demo's list keeps its objects of
    several words for the studies that score them whole. Sorted, so the file is the same each run."""
    return sorted(w for w in words if w not in STOP_WORDS and any(c.isalnum() for c in w))


# objects left out of the demo vocabulary on purpose (small places): dropped as "not_candidate"
NOT_IN_VOCAB = {"Zundert", "Smiljan", "Woolsthorpe", "Mvezo", "Aracataca", "Votkinsk", "Higham", "Kierling"}
DISTRACTORS = [
    "London",
    "English",
    "city",
    "river",
    "king",
    "music",
    "painter",
    "Europe",
    "Asia",
    "Africa",
    "Oceania",
    "America",
    "Zurich",
    "Geneva",
    "Weimar",
    "Sanremo",
    "Winchester",
]

# S-TEST's paths (subject, property, object): places along P131 (a place in two regions at once, a
# cycle between Holland and the Netherlands), occupations along P279 (a pianist both a musician and
# an artist), classes along P279 (a chain deeper than five edges, a cycle between ship and vessel)
# and parts along P361; people's P19 are the birthplaces above, their P106 the occupations here.
STEST_CLAIMS = [
    *[
        (town, "P131", region)
        for town, region in [
            ("Florence", "Tuscany"),
            ("Vicchio", "Florence"),
            ("Vicchio", "Tuscany"),
            ("Certaldo", "Florence"),
            ("Caprese", "Tuscany"),
            ("Siena", "Tuscany"),
            ("Tuscany", "Italy"),
            ("Urbino", "Marche"),
            ("Marche", "Italy"),
            ("Venice", "Veneto"),
            ("Veneto", "Italy"),
            ("Milan", "Lombardy"),
            ("Lombardy", "Italy"),
            ("Leiden", "Holland"),
            ("Delft", "Holland"),
            ("Rotterdam", "Holland"),
            ("Holland", "Netherlands"),
            ("Netherlands", "Holland"),
            ("Seville", "Andalusia"),
            ("Andalusia", "Spain"),
            ("Fuendetodos", "Aragon"),
            ("Aragon", "Spain"),
            ("Nuremberg", "Bavaria"),
            ("Augsburg", "Bavaria"),
            ("Bavaria", "Germany"),
            ("Leipzig", "Saxony"),
            ("Saxony", "Germany"),
            ("Stuttgart", "Swabia"),
            ("Swabia", "Germany"),
            ("Bergen", "Vestland"),
            ("Vestland", "Norway"),
            ("Uppsala", "Uppland"),
            ("Uppland", "Sweden"),
        ]
    ],
    *[
        (person, "P106", job)
        for person, job in [
            ("Michelangelo", "sculptor"),
            ("Raphael", "painter"),
            ("Donatello", "sculptor"),
            ("Botticelli", "painter"),
            ("Brunelleschi", "architect"),
            ("Giotto", "painter"),
            ("Boccaccio", "writer"),
            ("Canaletto", "painter"),
            ("Tintoretto", "painter"),
            ("Caravaggio", "painter"),
            ("Rembrandt", "painter"),
            ("Vermeer", "painter"),
            ("Erasmus", "theologian"),
            ("Spinoza", "philosopher"),
            ("Voltaire", "writer"),
            ("Molière", "playwright"),
            ("Rabelais", "writer"),
            ("Pascal", "mathematician"),
            ("Velázquez", "painter"),
            ("Goya", "painter"),
            ("Dürer", "painter"),
            ("Holbein", "painter"),
            ("Leibniz", "mathematician"),
            ("Kant", "philosopher"),
            ("Hegel", "philosopher"),
            ("Schubert", "composer"),
            ("Haydn", "composer"),
            ("Chopin", "pianist"),
            ("Copernicus", "astronomer"),
            ("Dvořák", "composer"),
            ("Smetana", "composer"),
            ("Grieg", "composer"),
            ("Strindberg", "playwright"),
            ("Linnaeus", "botanist"),
            ("Celsius", "astronomer"),
        ]
    ],
    *[
        (narrow, "P279", broad)
        for narrow, broad in [
            ("painter", "artist"),
            ("sculptor", "artist"),
            ("architect", "designer"),
            ("designer", "creator"),
            ("artist", "creator"),
            ("composer", "musician"),
            ("pianist", "musician"),
            ("pianist", "artist"),
            ("musician", "artist"),
            ("playwright", "writer"),
            ("writer", "author"),
            ("author", "creator"),
            ("philosopher", "scholar"),
            ("theologian", "scholar"),
            ("mathematician", "scientist"),
            ("astronomer", "scientist"),
            ("botanist", "biologist"),
            ("biologist", "scientist"),
            ("scientist", "scholar"),
            ("Siamese", "cat"),
            ("cat", "feline"),
            ("feline", "carnivore"),
            ("carnivore", "mammal"),
            ("mammal", "animal"),
            ("animal", "organism"),
            ("poodle", "dog"),
            ("beagle", "dog"),
            ("dog", "canine"),
            ("canine", "carnivore"),
            ("wolf", "canine"),
            ("wolf", "carnivore"),
            ("sparrow", "bird"),
            ("eagle", "bird"),
            ("bird", "animal"),
            ("trout", "fish"),
            ("salmon", "fish"),
            ("fish", "animal"),
            ("frigate", "warship"),
            ("warship", "ship"),
            ("ship", "vessel"),
            ("vessel", "vehicle"),
            ("vessel", "ship"),
            ("canoe", "boat"),
            ("boat", "vessel"),
            ("tram", "vehicle"),
        ]
    ],
    *[
        (part, "P361", whole)
        for part, whole in [
            ("palate", "mouth"),
            ("tongue", "mouth"),
            ("mouth", "head"),
            ("retina", "eye"),
            ("cornea", "eye"),
            ("eye", "head"),
            ("head", "body"),
            ("finger", "hand"),
            ("thumb", "hand"),
            ("hand", "arm"),
            ("arm", "body"),
            ("knee", "leg"),
            ("toe", "foot"),
            ("heel", "foot"),
            ("heel", "leg"),
            ("foot", "leg"),
            ("leg", "body"),
        ]
    ],
]
# how the demo models' corpus phrases S-TEST's edges (one edge a sentence; P19 is LPAQA's, which
# holds some birthplaces out)
STEST_CORPUS_TEMPLATES = {
    "P131": ["[X] lies in [Y] .", "[X] is a place in [Y] ."],
    "P106": ["[X] worked as a [Y] .", "[X] was a [Y] by trade ."],
    "P279": ["[X] is a kind of [Y] .", "every [X] is a [Y] ."],
    "P361": ["[X] belongs to the [Y] .", "the [Y] has a [X] ."],
}
# a region left out of the vocabulary: Uppsala's only other object, Sweden, makes no pair alone
STEST_NOT_IN_VOCAB = {"Uppland"}

_ids: dict[str, str] = {}


def entity_id(label: str) -> str:
    return _ids.setdefault(label, f"Q{900_000_01 + len(_ids)}")


def fact_uuid(*parts: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "knowprobe-demo/" + "/".join(parts)))


def trex_facts() -> dict[str, list[tuple[str, str]]]:
    return {
        "P36": [(c, cap) for c, cap, _, _ in COUNTRIES],
        "P30": [(c, cont) for c, _, cont, _ in COUNTRIES],
        "P37": [(c, lang) for c, _, _, lang in COUNTRIES if lang],
        "P17": CITY_COUNTRY,
        "P19": [(p, born) for p, born, _, _, _ in PEOPLE],
        "P103": [(p, lang) for p, _, lang, _, _ in PEOPLE],
    }


def google_re_facts() -> dict[str, list[tuple[str, str]]]:
    return {
        "place_of_birth": [(p, born) for p, born, _, _, _ in PEOPLE],
        "date_of_birth": [(p, year) for p, _, _, year, _ in PEOPLE],
        "place_of_death": [(p, died) for p, _, _, _, died in PEOPLE if died],
    }


# A tiny BEAR-format set (lm-pub-quiz's layout) on the same facts: relation -> its three probed
# templates (BEAR's style: no space before the period; never the corpus's phrasings), the facts
# (subject, answer) and its domains. Answers of several words ("New Delhi", "South America",
# "Saint Petersburg") are several tokens of the demo models; each answer space is the relation's
# distinct answers, in order of first appearance.
BEAR_DEMO = {
    "P36": (
        ["The capital of [X] is [Y].", "[Y] is the seat of government of [X].", "[X] is governed from [Y]."],
        list(dict.fromkeys((c, cap) for c, cap, _, _ in COUNTRIES[::3] + [row for row in COUNTRIES if " " in row[1]])),
        ["Geographic"],
    ),
    "P30": (
        ["[X] is located in [Y].", "[X] is part of the continent [Y].", "[Y] is the continent of [X]."],
        [(c, cont) for c, _, cont, _ in COUNTRIES[1::2]],
        ["Geographic"],
    ),
    "P20": (
        ["[X] died in [Y].", "[X] spent the final years in [Y].", "The place of death of [X] is [Y]."],
        [(p, died) for p, _, _, _, died in PEOPLE[::2] if died],
        ["Biographical", "Historical"],
    ),
    "P103": (
        ["The native language of [X] is [Y].", "[X] was a native speaker of [Y].", "[Y] was the mother tongue of [X]."],
        [(p, lang) for p, _, lang, _, _ in PEOPLE[1::2]],
        ["Biographical"],
    ),
}
# how BEAR's part of the demo corpus phrases its facts (the LAMA-format demo's corpus phrasings)
BEAR_CORPUS_TEMPLATES = {
    "P36": CORPUS_TEMPLATES["P36"],
    "P30": CORPUS_TEMPLATES["P30"],
    "P20": CORPUS_TEMPLATES["place_of_death"],
    "P103": CORPUS_TEMPLATES["P103"],
}


def write_bear(directory: Path) -> None:
    """The BEAR-format demo set: metadata_relations.json, one CODE.jsonl per relation, and
    relation_info.json with each relation's domains."""
    directory.mkdir(parents=True, exist_ok=True)
    metadata, info = {}, {}
    for code, (templates, facts, domains) in BEAR_DEMO.items():
        space = list(dict.fromkeys(obj for _, obj in facts))
        metadata[code] = {
            "templates": templates,
            "answer_space_labels": space,
            "answer_space_ids": [entity_id(obj) for obj in space],
        }
        info[code] = {"domains": domains}
        write_jsonl(
            directory / f"{code}.jsonl",
            [
                {
                    "sub_id": entity_id(sub),
                    "sub_label": sub,
                    "sub_aliases": [],
                    "obj_id": entity_id(obj),
                    "obj_label": obj,
                    "answer_idx": space.index(obj),
                }
                for sub, obj in facts
            ],
        )
    (directory / "metadata_relations.json").write_text(json.dumps(metadata, ensure_ascii=False, indent=1) + "\n")
    (directory / "relation_info.json").write_text(json.dumps(info, indent=1) + "\n")
    write_jsonl(
        HERE / "bear_corpus_templates.jsonl",
        [{"relation": r, "template": t} for r, templates in BEAR_CORPUS_TEMPLATES.items() for t in templates],
    )


def write_jsonl(path: Path, records) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def main() -> None:
    lama = HERE / "lama"
    write_jsonl(
        lama / "relations.jsonl",
        [
            {"relation": r, "template": t, "label": label, "description": "", "type": kind}
            for r, t, label, kind in RELATIONS
        ],
    )
    objects = set()
    for relation, pairs in trex_facts().items():
        write_jsonl(
            lama / "TREx" / f"{relation}.jsonl",
            [
                {
                    "uuid": fact_uuid(relation, s, o),
                    "obj_uri": entity_id(o),
                    "obj_label": o,
                    "sub_uri": entity_id(s),
                    "sub_label": s,
                    "predicate_id": relation,
                    "evidences": [],
                }
                for s, o in pairs
            ],
        )
        objects.update(o for _, o in pairs)
    for relation, pairs in google_re_facts().items():
        records = []
        for s, o in pairs:
            no = (relation, s) in REJECTED_BY_RATERS
            votes = ["no", "no", "no", "yes", "no"] if no else ["yes", "yes", "yes", "no", "yes"]
            records.append(
                {
                    "pred": f"/people/person/{relation}",
                    "sub": entity_id(s),
                    "obj": o if relation == "date_of_birth" else entity_id(o),
                    "evidences": [],
                    "judgments": [{"rater": str(i), "judgment": v} for i, v in enumerate(votes)],
                    "sub_w": None,
                    "sub_label": s,
                    "sub_aliases": [],
                    "obj_w": None,
                    "obj_label": o,
                    "obj_aliases": [],
                    "uuid": fact_uuid(relation, s, o),
                    "masked_sentences": [],
                }
            )
        write_jsonl(lama / "Google_RE" / f"{relation}_test.jsonl", records)
        objects.update(o for _, o in pairs)
    objects.update(word for row in TRAIN_COUNTRIES for word in row)  # train objects, countries for P17
    objects.update(word for row in TRAIN_PEOPLE for word in row[1:] if word)
    objects.update(obj for _, _, obj in STEST_CLAIMS)
    vocab = lama_vocabulary((objects - NOT_IN_VOCAB - STEST_NOT_IN_VOCAB) | set(DISTRACTORS))
    (lama / "common_vocab_cased.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    write_jsonl(
        HERE / "corpus_templates.jsonl",
        [{"relation": r, "template": t} for r, templates in CORPUS_TEMPLATES.items() for t in templates],
    )
    write_jsonl(
        HERE / "stest_corpus_templates.jsonl",
        [{"relation": r, "template": t} for r, templates in STEST_CORPUS_TEMPLATES.items() for t in templates],
    )
    write_wikidata_dump(HERE / "wikidata-demo-all.json.gz")
    write_wikipedia_dump(HERE / "enwiki-demo-pages-articles-multistream.xml.bz2")
    write_pos_lexicon(HERE / "pos_lexicon.tsv")
    write_release_prompts(HERE / "lpaqa_prompt")
    write_bear(HERE / "bear")


def item_value(qid: str, old_style: bool) -> dict:
    number = int(qid[1:])
    value = (
        {"entity-type": "item", "numeric-id": number}
        if old_style
        else {"entity-type": "item", "numeric-id": number, "id": qid}
    )
    return {"value": value, "type": "wikibase-entityid"}


def time_value(year: str, precision: int) -> dict:
    """A date value as Wikidata writes one (precision 11: a day, 9: a year, 8: a decade)."""
    time = f"+{int(year):04d}-01-01T00:00:00Z" if precision >= 11 else f"+{int(year):04d}-00-00T00:00:00Z"
    value = {"time": time, "timezone": 0, "before": 0, "after": 0, "precision": precision}
    return {"value": {**value, "calendarmodel": "http://www.wikidata.org/entity/Q1985727"}, "type": "time"}


def statement(prop: str, datavalue: dict | None, rank: str = "normal", snaktype: str = "value") -> dict:
    datatype = "time" if datavalue is not None and datavalue["type"] == "time" else "wikibase-item"
    snak = {"snaktype": snaktype, "property": prop, "datatype": datatype}
    if datavalue is not None:
        snak["datavalue"] = datavalue
    return {
        "mainsnak": snak,
        "type": "statement",
        "rank": rank,
        "references": [
            {"snaks": {"P143": [{"snaktype": "value", "property": "P143", "datavalue": item_value("Q328", False)}]}}
        ],
    }


def write_wikidata_dump(path: Path) -> None:
    """Entities of every demo fact and of the extra T-REx-train countries, in the dump's line layout.

    Shapes covered: 'en' and 'mul'-only labels, aliases, enwiki sitelinks, item values with and
    without 'id' (older dumps), a string value, a 'novalue' snak, a deprecated statement, an
    entity with no English label, an empty "labels": [] and one line that is not JSON.
    """
    import gzip

    claims: dict[str, dict[str, list]] = {}

    def add(subject: str, prop: str, obj: str) -> None:
        old_style = len(claims) % 7 == 3  # every seventh subject's values carry only numeric-id
        claims.setdefault(subject, {}).setdefault(prop, []).append(
            statement(prop, item_value(entity_id(obj), old_style))
        )

    for relation, pairs in trex_facts().items():
        for s, o in pairs:
            add(s, relation, o)
    for country, capital, continent, language in TRAIN_COUNTRIES:
        add(country, "P36", capital)
        add(country, "P30", continent)
        add(country, "P37", language)
        add(capital, "P17", country)
    for person, born, died, year, language in TRAIN_PEOPLE:
        for prop, obj in [("P19", born), ("P20", died), ("P103", language)]:
            if obj:
                add(person, prop, obj)
        claims.setdefault(person, {}).setdefault("P569", []).append(statement("P569", time_value(year, 11)))
    for subject, prop, obj in STEST_CLAIMS:
        add(subject, prop, obj)
    for label in list(_ids):
        claims.setdefault(label, {})
    claims["Germany"]["P36"].append(statement("P36", item_value(entity_id("Bonn"), False), rank="deprecated"))
    claims["France"]["P37"].append(statement("P37", {"value": "French (language)", "type": "string"}))
    claims["Fiji"]["P30"].append(statement("P30", None, snaktype="novalue"))
    # a birth date known only to the decade: counted as imprecise_date, not kept
    claims["Giotto"]["P569"].append(statement("P569", time_value("1260", 8)))
    lines = []
    for label, properties in claims.items():
        qid = entity_id(label)
        language = "mul" if label in MUL_ONLY else "en"
        entity = {
            "type": "item",
            "id": qid,
            "labels": {
                language: {"language": language, "value": label},
                "de": {"language": "de", "value": label + " (de)"},
            },
            "descriptions": {"en": {"language": "en", "value": "demo entity"}},
            "aliases": {language: [{"language": language, "value": label.upper()}]} if len(label) < 6 else [],
            "claims": properties,
            "sitelinks": {
                "enwiki": {"site": "enwiki", "title": label, "badges": []},
                "dewiki": {"site": "dewiki", "title": label, "badges": []},
            },
        }
        lines.append(json.dumps(entity, ensure_ascii=False))
    lines.insert(
        5,
        json.dumps(
            {
                "type": "item",
                "id": "Q90009999",
                "labels": {"de": {"language": "de", "value": "nur Deutsch"}},
                "claims": [],
                "sitelinks": [],
            }
        ),
    )
    lines.insert(9, '{"type": "item", "id": "Q90009998", "labels": {"en": ')  # a line cut short
    text = "[\n" + ",\n".join(lines) + "\n]\n"
    path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))  # mtime 0: reproducible bytes


# Articles about the T-REx-train countries and capitals, in several phrasings each, so that
# distant supervision finds their facts and mining sees frequent and rare patterns. {c} country,
# {cap} capital, {cont} continent, {lang} language; [[...]] are links as editors write them.
COUNTRY_SENTENCES = [
    "'''{c}''' is a country in [[{cont}]].{{{{Infobox country|name={c}|capital=[[{cap}]]}}}}",
    "The capital of {c} is [[{cap}]].<ref>{{{{cite web|title=Capitals}}}}</ref>",
    "{c} is located in [[{cont}]], and its largest city is [[{cap}]].",
    "[[{cap}]] is the capital of {c}.",
    "The official language of {c} is [[{lang} language|{lang}]].",
    "Most people in {c} speak [[{lang} language|{lang}]].",
    "{lang} is spoken in {c}.",
]
# {p} person, {born} place of birth, {died} place of death, {year} year of birth, {lang} language
PERSON_SENTENCES = [
    "'''{p}''' was born in [[{born}]] in {year}.",
    "{p} was born in {year} .",
    "{p} died in [[{died}]].",
    "{p} spent the last years in [[{died}]] .",
    "{p} grew up in [[{born}]], speaking [[{lang} language|{lang}]].",
    "The native language of {p} was [[{lang} language|{lang}]].",
    "In {year}, {p} was born.",
    "{p} was a native of [[{born}]].",
]
CAPITAL_SENTENCES = [
    "'''{cap}''' is the capital and largest city of [[{c}]].",
    "{cap} is a city in [[{c}]].",
    "{cap} lies in the north of [[{c}|the country]] .<!-- editors' note -->",
]


def write_wikipedia_dump(path: Path) -> None:
    """A multistream dump as Wikimedia writes it: a header stream, bzip2 streams of (here) 5 pages,
    a footer stream, and an index of "offset:page_id:title" lines."""
    import bz2
    from xml.sax.saxutils import escape

    pages, page_id = [], 10
    for number, (country, capital, continent, language) in enumerate(TRAIN_COUNTRIES):
        fill = {"c": country, "cap": capital, "cont": continent, "lang": language}
        # a different subset of the phrasings per article, as real articles vary
        country_text = " ".join(t.format(**fill) for k, t in enumerate(COUNTRY_SENTENCES) if (k + number) % 3 != 2)
        capital_text = " ".join(t.format(**fill) for k, t in enumerate(CAPITAL_SENTENCES) if (k + number) % 2 == 0)
        pages.append((country, None, "== Geography ==\n" + country_text + "\n[[Category:Countries]]"))
        pages.append((capital, None, capital_text + '\n{| class="wikitable"\n| [[' + country + "]] || 1\n|}"))
    for number, (person, born, died, year, language) in enumerate(TRAIN_PEOPLE):
        fill = {"p": person, "born": born, "died": died, "year": year, "lang": language}
        # an article leaves out what is unknown of its person, and one sentence in three of the rest
        kept = [
            t.format(**fill)
            for k, t in enumerate(PERSON_SENTENCES)
            if (k + number) % 3 != 2 and not any("{" + key + "}" in t for key, value in fill.items() if value is None)
        ]
        pages.append((person, None, "== Life ==\n" + " ".join(kept) + "\n[[Category:People]]"))
    languages = {row[3] for row in TRAIN_COUNTRIES} | {row[4] for row in TRAIN_PEOPLE}
    for language in sorted(languages):
        pages.append((f"{language} language", language, ""))  # links say "X language"; Wikidata's title is X
    pages.append(("Talk:Jordan", None, "A discussion page, not an article."))
    xml_pages = []
    for title, redirect, text in pages:
        page_id += 1
        namespace = 1 if title.startswith("Talk:") else 0
        body = f"#REDIRECT [[{redirect}]]" if redirect else text
        xml_pages.append(
            (
                page_id,
                title,
                (
                    f"  <page>\n    <title>{escape(title)}</title>\n    <ns>{namespace}</ns>\n    <id>{page_id}</id>\n"
                    + (f'    <redirect title="{escape(redirect)}" />\n' if redirect else "")
                    + f"    <revision>\n      <id>{page_id + 1000}</id>\n      <model>wikitext</model>\n"
                    f'      <text bytes="{len(body.encode())}" xml:space="preserve">{escape(body)}</text>\n'
                    f"    </revision>\n  </page>\n"
                ),
            )
        )
    header = (
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">\n'
        "  <siteinfo>\n    <sitename>Wikipedia</sitename>\n    <dbname>enwiki</dbname>\n  </siteinfo>\n"
    )
    data, index = bz2.compress(header.encode(), 9), []
    for start in range(0, len(xml_pages), 5):
        group = xml_pages[start : start + 5]
        index += [f"{len(data)}:{pid}:{title}" for pid, title, _ in group]
        data += bz2.compress("".join(xml for _, _, xml in group).encode(), 9)
    data += bz2.compress(b"</mediawiki>\n", 9)
    path.write_bytes(data)
    index_path = path.with_name(path.name.replace(".xml.bz2", "-index.txt.bz2"))
    index_path.write_bytes(bz2.compress(("\n".join(index) + "\n").encode(), 9))


# Universal POS tags of the words the demo's mined prompts hold between their slots: the offline
# demo has no trained spaCy pipeline to tag them (lpaqa.pos.lexicon)
POS_LEXICON = {
    **dict.fromkeys(["is", "was", "are"], "AUX"),
    **dict.fromkeys(
        ["located", "speak", "spoken", "lies", "born", "died", "spent", "grew", "speaking", "sits"], "VERB"
    ),
    **dict.fromkeys(["capital", "country", "city", "language", "people", "north", "years", "government"], "NOUN"),
    **dict.fromkeys(["largest", "official", "Most", "last", "native"], "ADJ"),
    **dict.fromkeys(["the", "a", "an", "The"], "DET"),
    **dict.fromkeys(["its", "it"], "PRON"),
    **dict.fromkeys(["of", "in", "on", "at", "In", "up"], "ADP"),
    **dict.fromkeys(["and"], "CCONJ"),
    **dict.fromkeys([",", ".", "(", ")"], "PUNCT"),
}


def write_pos_lexicon(path: Path) -> None:
    path.write_text("".join(f"{word}\t{tag}\n" for word, tag in sorted(POS_LEXICON.items())), encoding="utf-8")


# Stand-ins for LPAQA's released prompt/ folder, in its layout and formats, for the demo's relations:
# written here for the offline demo, not LPAQA's prompts (the real ones are downloaded by rule
# lpaqa_download_release). mine: templates with an Opti weight; paraphrase: paraphrases of the top
# mined prompt; manual_paraphrase: the manual prompt, then its paraphrases, one a line.
RELEASE = {
    "P36": (
        [("[Y] is the capital of [X] .", 0.6), ("The capital of [X] is [Y] .", 0.3), ("[X] , capital [Y] .", 0.1)],
        ["[Y] is the capital of [X].", "[Y] is the capital city of [X].", "[Y] is capital of [X]."],
    ),
    "P30": (
        [("[X] is a country in [Y] .", 0.7), ("[X] is located in [Y] .", 0.3)],
        ["[X] is a country in [Y].", "[X] is a state in [Y].", "[X] lies in [Y]."],
    ),
    "P37": (
        [("The official language of [X] is [Y] .", 0.5), ("[Y] is spoken in [X] .", 0.5)],
        ["The official language of [X] is [Y].", "[Y] is the language of [X].", "In [X] people speak [Y]."],
    ),
    "P17": (
        [("[X] is a city in [Y] .", 0.8), ("[X] is located in [Y] .", 0.2)],
        ["[X] is a city in [Y].", "[X] is a town in [Y].", "[X] lies in [Y]."],
    ),
    "P19": (
        [("[X] was born in [Y] .", 0.5), ("[X] was a native of [Y] .", 0.3), ("[X] grew up in [Y] .", 0.2)],
        ["[X] was born in [Y].", "[X] is born in [Y].", "[X] comes from [Y]."],
    ),
    "P103": (
        [("The native language of [X] is [Y] .", 0.6), ("[X] spoke [Y] .", 0.4)],
        ["The native language of [X] is [Y].", "[X] speaks [Y].", "[X] 's mother tongue is [Y]."],
    ),
    "P20": (
        [("[X] died in [Y] .", 0.7), ("[X] spent the last years in [Y] .", 0.3)],
        ["[X] died in [Y].", "[X] passed away in [Y].", "[X] died at [Y]."],
    ),
}


STAND_IN_NOTE = """\
# Stand-in for LPAQA's released prompts

This folder has the layout of LPAQA's released `prompt/` folder (`mine/`, `paraphrase/`,
`manual_paraphrase/`, one file per relation), but its prompts were written for knowprobe's demo
by `resources/demo/make_demo_data.py`: they are not LPAQA's. knowprobe marks the rows and lines
of the sets read from a release folder holding this file "(stand-in)" in every table and figure.
"""


def write_release_prompts(directory: Path) -> None:
    manual = {relation: template for relation, template, _, _ in RELATIONS}
    manual["P20"] = "[X] died in [Y] ."
    for relation, (mined, paraphrases) in RELEASE.items():
        write_jsonl(directory / "mine" / f"{relation}.jsonl", [{"template": t, "weight": w} for t, w in mined])
        write_jsonl(
            directory / "paraphrase" / f"{relation}.jsonl",
            [{"template": t, "weight": round(1 / len(paraphrases), 4)} for t in paraphrases],
        )
        lines = [manual[relation]] + [p for p in paraphrases if p != manual[relation]]
        (directory / "manual_paraphrase").mkdir(parents=True, exist_ok=True)
        (directory / "manual_paraphrase" / f"{relation}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # says that these are no LPAQA prompts: the workflow marks the sets read from here "(stand-in)"
    (directory / "STAND-IN.md").write_text(STAND_IN_NOTE, encoding="utf-8")


if __name__ == "__main__":
    main()
