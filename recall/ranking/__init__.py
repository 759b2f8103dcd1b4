"""What the retriever does with the arms' candidate lists: ``fusion`` ranks them into one
list by reciprocal rank, ``floor`` withholds from rendering the ranked originals no channel
relates to the query. Pure: no database.
"""
