"""What a paper reports and how we run it: the reported values (``reported``), a companion's
descriptor and the registry that discovers the companions (``paper``), the named settings
smoke / quick / paper (``profiles``), a study declared as data (``study``), the shared
definition of a client's majority / minority / absent classes (``class_roles``), a paper's
notebooks (``notebooks``) and a method's colour in its figures (``palette``).
"""
