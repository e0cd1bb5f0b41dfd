-- People signed in at the identity provider. Each sign-in to the console is kept while its token lasts (and a day
-- after), so that an operator sees who is signed in; a sign-out (by an operator, or by the provider's back-channel
-- logout) refuses every token of that person issued before it, on every instance within a second.
CREATE TABLE sign_ins (
    id           uuid         PRIMARY KEY,
    subject      text         NOT NULL,
    name         text         NOT NULL,
    -- the provider's session id (sid), where its tokens carry one: its back-channel logout may name only that
    sid          text,
    signed_in_at timestamptz  NOT NULL,
    expires_at   timestamptz  NOT NULL
);
CREATE INDEX sign_ins_by_expiry ON sign_ins (expires_at);
CREATE INDEX sign_ins_by_sid ON sign_ins (sid) WHERE sid IS NOT NULL;

CREATE TABLE sign_outs (
    subject   text         PRIMARY KEY,
    -- tokens of the subject issued before this are refused
    before    timestamptz  NOT NULL,
    by        text         NOT NULL
);
