package com.example.orders;

import dev.locksmith.accounts.AccountNotFoundException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/** The example's failures as RFC 9457 problem details. */
@RestControllerAdvice
class ErrorAnswers {

    @ExceptionHandler(IllegalArgumentException.class)
    ProblemDetail badRequest(IllegalArgumentException e) {
        return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, e.getMessage());
    }

    @ExceptionHandler(AccountNotFoundException.class)
    ProblemDetail noAccount(AccountNotFoundException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.NOT_FOUND, e.getMessage());
        problem.setProperty("accountId", e.accountId());
        return problem;
    }

    /** The ids of what was written and rolled back, so that anyone can check they are gone. */
    @ExceptionHandler(SimulatedFailureException.class)
    ProblemDetail simulatedFailure(SimulatedFailureException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.INTERNAL_SERVER_ERROR, e.getMessage());
        problem.setTitle("Simulated failure after enqueue");
        problem.setProperty("orderId", e.orderId());
        problem.setProperty("jobId", e.jobId());
        return problem;
    }

    @ExceptionHandler(OutboundCalls.NoIdleChannelAccountException.class)
    ResponseEntity<ProblemDetail> noChannelAccount(OutboundCalls.NoIdleChannelAccountException e) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
                .header("Retry-After", "1")
                .body(ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, e.getMessage()));
    }

    @ExceptionHandler(OutboundCalls.OutboundCallFailedException.class)
    ProblemDetail outboundFailed(OutboundCalls.OutboundCallFailedException e) {
        return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_GATEWAY, e.getMessage());
    }
}
