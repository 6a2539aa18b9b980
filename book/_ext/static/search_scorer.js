// The book's search scorer (search_ranking.py sets it as html_search_scorer; Sphinx puts it
// before its search code, which keeps a Scorer that is already defined). The weights are
// Sphinx's own; score() puts every result of the library reference after every result of the
// chapters and notebooks, in the same order among themselves, so that a word a chapter
// explains and a docstring mentions finds the chapter first.
var Scorer = {
  referencePages: ["book/api"],
  referencePenalty: 1000,
  score: (result) => {
    const [docname, , , , score] = result;
    return Scorer.referencePages.includes(docname) ? score - Scorer.referencePenalty : score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: {0: 15, 1: 5, 2: -5},
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
