"""The screening instruments' items that analyze reads (pure data): crisis language (PHQ-9 item 9, the C-SSRS, the
ASQ, the Beck Scale for Suicide Ideation, the Interpersonal Needs Questionnaire, the AFSP's warning signs) and a
disclosure of abuse (HITS, the Abuse Assessment Screen, WAST, the Danger Assessment, the Sexual Experiences Survey,
child-protection guidance). Each list names its source and was written from it, never from a query set; a reader's
sentence is matched against them in analyze._read (the crisis words of oneself or one's own, abuse of oneself)."""

from __future__ import annotations

import re

_SELF = ("myself", "yourself", "himself", "herself", "themselves", "themself")
_POSSESSIVE = ("my", "your", "his", "her", "their")
# The instruments ask in the second person ("thoughts of killing yourself"); a reader says it of herself, and a parent
# or a friend of someone else ("my son says he wants to kill himself"), so each item is matched in every person.
CRISIS = (
    *(f"{verb} {who}" for verb in ("kill", "killing", "killed", "hurting", "hurt", "harm", "harming",
                                   # the C-SSRS behaviour item's methods ("tried to shoot yourself, cut yourself, tried
                                   # to hang yourself")
                                   "shoot", "shooting", "shot", "hang", "hanging", "hanged", "cut", "cutting")
      for who in _SELF),
    *(f"{verb} {whose} {own}life" for verb in ("end", "ending", "take", "taking", "took")
      for whose in _POSSESSIVE for own in ("", "own ")),
    *(f"{wish} {who} {be} dead" for wish in ("wish", "wishes", "wished") for who in ("i", "you", "he", "she", "they")
      for be in ("was", "were")),
    "want to die", "wants to die", "wanted to die",
)
# Perceived burdensomeness, as the Interpersonal Needs Questionnaire words it (Van Orden et al. 2012: "the people in my
# life would be better off if I were gone", "my death would be a relief to the people in my life") and the AFSP's
# warning signs ("being a burden to others", "having no reason to live"): of oneself only where another person's
# version is ordinary talk ("she's better off without him"), in every person where it is not ("no reason to live")
BURDEN = ("better off without me", "better off if i was gone", "better off if i were gone",
          "my death would be a relief", "no reason to live")
# Every phrase that reads as crisis and as distress alike: one tuple, so neither list can gain one without the other
SELF_HARM = (*CRISIS, "self-harm", "better off dead", "not alive anymore", *BURDEN)
# A reader at risk, or someone of theirs (query/care.py; first person only, so "Judas killed himself" is a study
# question): the self-harm items and burdensomeness above and the same instruments' words for it, with the ASQ's
# "... would be better off if you were dead" in every person (crisis only: pastoral intent already reads its "dead")
CRISIS_WORDS = (*SELF_HARM, "suicid",
                *(f"better off if {who} {be} dead" for who in ("i", "you", "he", "she", "we", "they")
                  for be in ("was", "were")))
# The Beck Scale for Suicide Ideation's first item, the wish to live, at its lowest ("no wish to live"), in every person
# and tense; said of life itself ("anymore", "like this", or where the clause ends), so "I don't want to live in fear"
# is distress, not crisis. The C-SSRS defines its first item as a wish to be "dead or not alive anymore" (above).
NO_WISH_TO_LIVE = re.compile(r"\b(?:no (?:wish|desire) to live|(?:don't|do not|doesn't|does not|didn't|did not|no longer|"
                             r"never) (?:want|wants|wanted|wish|wishes|wished) to (?:live|be alive)(?: anymore| any more| like "
                             r"this|\s*(?:[.,;:!?]|$)))")
# Crisis told in everyday words beyond CRISIS's verbs, each part from its source, in every person (the reader, or
# someone of theirs):
# - the C-SSRS screener: its first item's wish "to go to sleep and not wake up" (asked of, or prayed for: "take me in
#   my sleep"; said plainly: "don't want to wake up tomorrow", not "wake up the baby"); its behaviour item's examples
#   ("collected pills, obtained a gun, gave away valuables, wrote a will or suicide note": a suicide or goodbye note,
#   not a will, which is ordinary), with looking up how many pills, goodbyes said and affairs put in order;
#   self-injury (cutting, burning oneself);
# - the ASQ's "have you ever tried to kill yourself" (an attempt, an overdose tried);
# - the AFSP's warning signs: talking about being a burden, having no reason to live, being in unbearable pain, and
#   the everyday ways of saying so ("I don't want to be here anymore", "tired of existing", "end it all", "thinking
#   about ending it", "eat his gun").
CRISIS_PHRASES = re.compile(
    r"\b(?:(?:go to sleep|fall asleep|sleep) and (?:not|never) wake up|never wake up again|(?:take|takes) me in my sleep|"
    r"(?:hope|wish|pray)\w* (?:i|he|she|they) (?:don't|dont|doesn't|doesnt|won't|wont|never|wouldn't|wouldnt) wake up"
    r"|(?:don't|dont|do not|doesn't|doesnt|didn't|didnt|never) (?:want|wants|wanted|wanna) to wake up(?= tomorrow| again|"
    r" anymore| any more| ever| in the morning|\s*[.,;:!?]|\s*$)"
    r"|(?:sav|stockpil|collect|hoard|stash)\w* (?:up )?(?:\w+ ){0,2}pills|pills (?:saved|stashed|stockpiled|collected|"
    r"hoarded)|how many (?:\w+ )?pills (?:it would take|to take|would)|(?:gave|giving|give) away (?:my|his|her|their) "
    r"(?:things|stuff|belongings|valuables)|said (?:all )?(?:my|his|her|their) goodbyes|put (?:everything|my affairs|"
    r"my things) in order|(?:don't|dont|do not) trust (?:myself|himself|herself) with (?:it|the gun|a gun|the pills)|"
    r"(?:eat|eating|ate) (?:his|my|her|their) gun|(?:suicide|goodbye) (?:note|letter)s?\b"
    r"|self[- ]?harm\w*|cut(?:s|ting)? (?:myself|herself|himself|themselves|themself)|(?:been|is|was|she's|shes|he's|"
    r"hes|started|keeps?|i'm|im) cutting(?= again\b| and\b|\s*[.,;!?]|\s*$)|burn(?:s|ed|ing)? (?:myself|herself|himself|"
    r"my skin|her skin|his skin)"
    r"|(?:after|since|survived) (?:my|her|his|their) attempt|tried to overdose|(?:suicide|overdose) attempt"
    r"|(?:don't|dont|do not|doesn't|doesnt) want to be here (?:anymore|any more)|(?:won't|wont) be here (?:for|much "
    r"longer|next|by)|disappear(?:ing)? (?:forever|for good)|tired of (?:living|existing|being alive)|tired of fighting "
    r"to stay alive|(?:life|living) (?:isn't|isnt|is not) worth (?:living|it)|no reason to (?:keep )?(?:living|go on)|"
    r"(?:won't|wont) be a burden (?:much )?(?:longer|anymore)"
    r"|(?:going to|gonna|want to|wanna|plan(?:ning)? to|ready to) end it\b(?! with| between| for)|(?:end|ending|ended) "
    r"it (?:all|tonight|today)|(?:thinking|thought|thoughts) (?:about|of) ending it)")
# Abuse by someone close, as intimate-partner-violence screening instruments ask it (HITS: hurt, insult, threaten,
# scream; the Abuse Assessment Screen: "hit, slapped, kicked or otherwise physically hurt", forced sex ("raped"); WAST:
# "hitting, kicking or pushing"), as done to the reader ("... me"), so "Jesus was hit" or "kicked out" is not one;
# a first-person sentence with one of them, or with "abused", discloses abuse (query/care.py)
ABUSE = (*(f"{verb} me" for verb in ("hit", "hits", "hitting", "slapped", "slaps", "kicked", "kicks", "pushed", "pushes",
                                     "shoved", "choked", "chokes", "beat", "beats", "beating", "punched", "punches",
                                     "threatens", "threatened", "threatening")),
         *(f"{verb} at me" for verb in ("screams", "screamed", "screaming", "curses", "cursed", "yells", "yelled")),
         *(f"{verb} me" for verb in ("rapes", "groped", "gropes")),
         "abusive", "raped", "raping", "molested", "assaulted")
# Abuse told in the words of instruments' items beyond one verb (each part names its source); like ABUSE, read only in
# a first-person sentence:
# - sex without consent as the Sexual Experiences Survey asks it (Koss et al., SES-SFV): "without my consent", "even
#   though I said no", "using force, for example holding me down", "taking advantage when I was too drunk or out of it
#   to stop what was happening" (drugged, waking to it); "forced me" or "made me do" where no errand follows ("forced
#   me to work late" is not one); "my rapist";
# - child sexual abuse as children tell it: someone "touched me", "it's our secret" (the grooming signs of
#   child-protection guidance);
# - the Danger Assessment's items (Campbell): strangled, threatened to kill ("if I leave"), threats about the
#   children, control of money and of seeing family, injuries hidden, things thrown, being locked in;
# - the same blows done to the reader with brothers and sisters by someone close: "us" alone is too often a team or a
#   town ("they beat us 3-0", "the storm hit us"), so the sentence must name who did it.
_CLOSE = (r"(?:mom|mother|mum|dad|father|parents?|step\w+|husband|wife|partner|boyfriend|girlfriend|ex|uncle|aunt|"
          r"brother|sister|grand\w+|foster \w+|cousin|coach|teacher|pastor|priest|babysitter|neighbou?r|boss|youth leader)")
_BLOWS = r"(?:hit|hits|beat|beats|slapped|slaps|kicked|kicks|choked|chokes|punched|punches|whipped|whips)"
DISCLOSED = re.compile(
    r"\b(?:forc(?:e|es|ed|ing) (?:me|himself on me|herself on me)(?! to\b)|forc(?:e|es|ed|ing) me to (?:have sex|do "
    r"(?:things|stuff|it|sexual))|made me do (?:things|stuff|sexual)|(?:held|pinned|holds|pins) me down|without my "
    r"consent|(?:my|her|his|the) rapist|(?:didn't|didnt|did not|wouldn't|wouldnt|would not) stop when i said no|said no"
    r"\b[^.!?]{0,30}\b(?:kept going|didn't stop|didnt stop|did it anyway)|(?:got|was|been) drugged|drugged me|spiked "
    r"my drink|woke up\b[^.!?]{0,30}\b(?:on top of me|clothes (?:were )?off|undressed)"
    r"|(?:he|she|" + _CLOSE + r")(?: \w+)? touched me|(?:it's|its|it is|it was) our (?:little )?secret"
    r"|strangl\w* me|threat\w* to (?:kill|hurt|harm|take|post)|kill me if i (?:ever )?(?:leave|tell|go)|(?:won't|wont) "
    r"let me see my (?:family|friends|parents)|takes? my (?:paycheck|passport|wages)|(?:cover|hide|hiding|covering) "
    r"(?:up )?(?:the|my) (?:marks|bruises)|(?:throws|threw|throwing) (?:things|stuff) at me|lock(?:s|ed)? me in (?:my|the|a) "
    r"(?:room|closet|basement)"
    r"|(?:my|our|moms|mums|dads|\w+'s) (?:\w+ )?" + _CLOSE + r"\b[^.!?]{0,40}?\b" + _BLOWS + r" (?:us|my (?:\w+ )?"
    r"(?:brothers?|sisters?|siblings?) and me|me and my (?:\w+ )?(?:brothers?|sisters?|siblings?)))\b")
