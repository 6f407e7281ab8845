-- The senders whose remote images a person always sees (decision 0044): a
-- reading preference kept on the node, so it follows the person from browser
-- to browser. The interface applies it only to mail whose sender was
-- authenticated, so a forged From cannot borrow it. Addresses are stored in
-- lower case, and the handler holds each person to a number of them.
CREATE TABLE image_senders (
    person_id TEXT NOT NULL REFERENCES people (id),
    address   TEXT NOT NULL CHECK (address = lower(address)),
    added_at  INTEGER NOT NULL,
    PRIMARY KEY (person_id, address)
) WITHOUT ROWID;
