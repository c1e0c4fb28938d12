# A team outside TypeScript, through the client openapi-python-client generated from the
# API's /openapi.json (test/api/generated-python-client.test.ts generates it): typed models
# for each operation type's answer, problems with their extension members, the union of
# every type on a read. An assert that fails exits 1; the last line is what it saw, as JSON.
#   python generated-python-client.py <folder of the generated package> <API url> <API key> <account> <account>
import json
import sys
import uuid

folder, url, token, alice, bob = sys.argv[1:6]
sys.path.insert(0, folder)

from retrysafe_client import AuthenticatedClient, Client  # noqa: E402
from retrysafe_client.api.operations import (  # noqa: E402
    cancel_operation,
    get_operation,
    list_operations,
    start_payment,
    start_transfer,
)
from retrysafe_client.api.system import get_health  # noqa: E402
from retrysafe_client.models import (  # noqa: E402
    ListOperationsType,
    OperationList,
    PaymentOperation,
    Problem,
    StartPaymentBody,
    StartPaymentBodyCurrency,
    StartTransferBody,
    StartTransferBodyCurrency,
    TransferOperation,
)

client = AuthenticatedClient(base_url=url, token=token, raise_on_unexpected_status=True)
anonymous = Client(base_url=url, raise_on_unexpected_status=True)
seen = {}

assert get_health.sync(client=anonymous).status == "ok"

key = str(uuid.uuid4())
body = StartPaymentBody(account=alice, amount=1250, currency=StartPaymentBodyCurrency.EUR)
first = start_payment.sync_detailed(client=client, body=body, idempotency_key=key)
assert first.status_code == 200 and isinstance(first.parsed, PaymentOperation), first
assert first.parsed.status == "succeeded", first.parsed
seen["key"] = key
seen["chargeId"] = first.parsed.result.charge_id

again = start_payment.sync_detailed(client=client, body=body, idempotency_key=key)
assert again.parsed.result.charge_id == seen["chargeId"], again.parsed
seen["replayed"] = again.headers.get("idempotent-replayed")

reused = start_payment.sync_detailed(
    client=client,
    body=StartPaymentBody(account=alice, amount=999, currency=StartPaymentBodyCurrency.EUR),
    idempotency_key=key,
)
assert reused.status_code == 422 and isinstance(reused.parsed, Problem), reused
seen["reused"] = [reused.parsed.code.value, reused.parsed.differences]

invalid = start_payment.sync_detailed(
    client=client,
    body=StartPaymentBody(account="", amount=1, currency=StartPaymentBodyCurrency.EUR),
    idempotency_key=str(uuid.uuid4()),
)
seen["invalid"] = [invalid.parsed.code.value, [e.field for e in invalid.parsed.errors]]

read = get_operation.sync(key=key, client=client)
assert isinstance(read, PaymentOperation), read
seen["read"] = [type(read).__name__, read.result.charge_id, [s.name for s in read.steps]]

transfer_key = str(uuid.uuid4())
transfer = start_transfer.sync(
    client=client,
    body=StartTransferBody(from_=alice, to=bob, amount=500, currency=StartTransferBodyCurrency.EUR),
    idempotency_key=transfer_key,
)
assert isinstance(transfer, TransferOperation), transfer
seen["transfer"] = [transfer_key, transfer.result.debit_id, transfer.result.credit_id]
assert isinstance(get_operation.sync(key=transfer_key, client=client), TransferOperation)

cancelled = cancel_operation.sync_detailed(key=transfer_key, client=client)
seen["cancel"] = [cancelled.status_code.value, cancelled.parsed.code.value]

missing = get_operation.sync_detailed(key="no-such-" + key, client=client)
seen["missing"] = [missing.status_code.value, missing.parsed.code.value]

page = list_operations.sync(client=client, type_=ListOperationsType.TRANSFER, limit="10")
assert isinstance(page, OperationList), page
seen["listed"] = sorted({type(o).__name__ for o in page.operations})

unauthorized = start_payment.sync_detailed(client=anonymous, body=body, idempotency_key=str(uuid.uuid4()))
seen["unauthorized"] = [unauthorized.status_code.value, unauthorized.parsed.code.value]

print(json.dumps(seen))
