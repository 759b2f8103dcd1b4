"""What the owner does with dreaming's results, one unit of work per use case:
``operations`` (approve, reject, undo), ``derived`` (review and delete a summary or
hypothesis) and ``pause`` (pause or resume dreaming). Each takes the authenticated
principal first and keeps working with processing switched off."""
