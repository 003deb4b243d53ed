class TraceContextTextMapPropagator:
    def extract(self, carrier):
        return {"span": ("remote", carrier["traceparent"])}

    def inject(self, carrier, context=None):
        carrier["traceparent"] = f"00-{'a' * 32}-{context['span'].span_id}-01"
