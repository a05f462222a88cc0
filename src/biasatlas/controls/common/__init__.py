"""What every probe's control shares: where the shipped adapters live and how each was trained
(``adapters``), the card's files and the trainer's manifest (``build``), asking a control's prompts and
the false-flag bound (``measure``), and saving a power figure (``figure``)."""
