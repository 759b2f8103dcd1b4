placeholder = True
