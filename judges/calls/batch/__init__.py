"""The providers' batch APIs: what a batch recording submits, keeps and answers from.

`api` talks to each provider's batch endpoint through its SDK, `store` keeps a recording's
state in the cassette folder, `answers` answers a judgement's requests from that state.
Nothing here imports vcrpy or pytest.
"""
