package com.example.orders;

import dev.locksmith.accounts.Account;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.accounts.TransferRequest;
import dev.locksmith.accounts.TransferResult;
import dev.locksmith.accounts.TransferStrategy;
import java.math.BigDecimal;
import java.net.URI;
import java.util.List;
import org.jooq.DSLContext;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /payments} between accounts, and {@code /accounts} to open and read them. */
@RestController
class PaymentController {

    private final Accounts accounts;
    private final AccountList list;
    private final DSLContext dsl;

    PaymentController(Accounts accounts, AccountList list, DSLContext dsl) {
        this.accounts = accounts;
        this.list = list;
        this.dsl = dsl;
    }

    /**
     * Moves money with {@code ATOMIC_GUARD}: a guarded debit ({@code ... WHERE balance >= amount})
     * and a credit, rows touched in ascending id order, in a transaction of its own that is
     * retried on deadlock or serialization failure. With a {@code paymentId} the payment is
     * idempotent: sent again (after a timeout, say) it answers {@code ALREADY_TRANSFERRED} and
     * moves nothing. Insufficient funds is an answer (409), not an error; nothing is written then.
     */
    @PostMapping("/payments")
    ResponseEntity<PaymentResult> pay(@RequestBody Payment body) {
        if (body.amount() == null) {
            throw new IllegalArgumentException("amount is required");
        }
        TransferRequest request =
                TransferRequest.of(body.from(), body.to(), body.amount(), TransferStrategy.ATOMIC_GUARD);
        if (body.paymentId() != null) {
            request = request.withTransferId(body.paymentId());
        }
        TransferResult result = accounts.transfer(request);
        PaymentResult answer = new PaymentResult(
                result.status(), result.attempts(), accounts.get(dsl, body.from()), accounts.get(dsl, body.to()));
        return ResponseEntity.status(result.transferred() ? HttpStatus.OK : HttpStatus.CONFLICT)
                .body(answer);
    }

    /** Opens an account. */
    @PostMapping("/accounts")
    ResponseEntity<Account> open(@RequestBody NewAccount body) {
        if (body.openingBalance() == null) {
            throw new IllegalArgumentException("openingBalance is required");
        }
        Account account = accounts.open(body.openingBalance());
        return ResponseEntity.created(URI.create("/accounts/" + account.id())).body(account);
    }

    /** The accounts (the first {@value AccountList#LIMIT}) and their total. */
    @GetMapping("/accounts")
    AccountsView all() {
        List<Account> all = list.first();
        return new AccountsView(all, all.stream().map(Account::balance).reduce(BigDecimal.ZERO, BigDecimal::add));
    }

    /** One account. */
    @GetMapping("/accounts/{id}")
    Account get(@PathVariable long id) {
        return accounts.get(dsl, id);
    }

    /**
     * The body of {@code POST /payments}.
     *
     * @param from the account debited
     * @param to the account credited
     * @param amount positive, at most two decimal places
     * @param paymentId optional idempotency key, up to 200 characters
     */
    record Payment(long from, long to, BigDecimal amount, String paymentId) {}

    /**
     * What a payment did.
     *
     * @param status {@code TRANSFERRED}, {@code ALREADY_TRANSFERRED} or {@code INSUFFICIENT_FUNDS}
     * @param attempts transactions it took
     * @param from the debited account afterwards
     * @param to the credited account afterwards
     */
    record PaymentResult(TransferResult.Status status, int attempts, Account from, Account to) {}

    /**
     * The body of {@code POST /accounts}.
     *
     * @param openingBalance zero or more, at most two decimal places
     */
    record NewAccount(BigDecimal openingBalance) {}

    /**
     * Accounts and the sum of their balances, which payments never change.
     *
     * @param accounts the accounts by id
     * @param total the sum of their balances
     */
    record AccountsView(List<Account> accounts, BigDecimal total) {}
}
