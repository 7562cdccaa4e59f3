"""The user's rights over their own data: forget what was learned, take the data away (the
JSON format the staff import reads, ``userdata.transfer``), delete the account."""
